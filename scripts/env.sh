# Sourced by the project's scripts: selects JDK 25 (the default java here may be 17) and checks Maven.
# Honours a JAVA_HOME that already points at JDK 25+.
rdmabus_java_major() { "$1/bin/java" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2}'; }
if [ -z "${JAVA_HOME:-}" ] || [ ! -x "$JAVA_HOME/bin/java" ] || [ "$(rdmabus_java_major "$JAVA_HOME")" -lt 25 ] 2>/dev/null; then
    JAVA_HOME=""
    for candidate in /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-25* /usr/lib/jvm/*-25* /usr/lib/jvm/jdk-25*; do
        if [ -x "$candidate/bin/java" ] && [ "$(rdmabus_java_major "$candidate")" -ge 25 ] 2>/dev/null; then
            JAVA_HOME="$candidate"
            break
        fi
    done
fi
if [ -z "$JAVA_HOME" ]; then
    echo "rdma-bus needs JDK 25: none found under /usr/lib/jvm. Install Temurin 25 or set JAVA_HOME to a JDK 25." >&2
    exit 2
fi
export JAVA_HOME
export PATH="$JAVA_HOME/bin:$PATH"
if ! command -v mvn >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        echo "Maven not found: installing Debian's maven package" >&2
        apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q maven
    else
        echo "Maven not found: install it (e.g. apt-get install maven)" >&2
        exit 2
    fi
fi
# Maven's own JVM (its bundled guava) calls sun.misc.Unsafe, which JDK 25 warns about at every start. The flag lives
# here, not in .mvn/jvm.config: there it made a plain `mvn` on an older default JDK die with "Unrecognized option"
# before Maven could say that rdma-bus needs JDK 25 (the enforcer rule in pom.xml does that now).
case " ${MAVEN_OPTS:-} " in
    *" --sun-misc-unsafe-memory-access="*) ;;
    *) export MAVEN_OPTS="${MAVEN_OPTS:+$MAVEN_OPTS }--sun-misc-unsafe-memory-access=allow" ;;
esac
# The JVM flags every process of the bus needs, from config/jvm.options (the one place they are written; the surefire
# argLine in pom.xml and the distribution's launcher read that file as a java @argument file).
RDMABUS_JVM_FLAGS="$(sed -e 's/#.*//' "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/config/jvm.options" | xargs)"
export RDMABUS_JVM_FLAGS
