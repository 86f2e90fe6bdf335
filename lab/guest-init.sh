#!/bin/sh
# Stage-2 init of an rxe lab guest (PID 1, POSIX sh). The root is the host's / over
# read-only 9p; lab/rxe-lab.sh wrote this guest's settings to the file named by
# lab_ctl= on the kernel command line. This script brings up eth0 + rxe0, runs the
# job script, stores its exit code and powers the guest off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root

log() { echo "rxe-lab guest: $*"; }
halt() {
  sync
  umount /mnt/out /mnt/shared 2>/dev/null
  busybox poweroff -f
  sleep 5
}
fail() { log "FAILED: $*"; [ -d /mnt/out ] && echo 125 > /mnt/out/exit-code; halt; }

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
# /tmp stays the host's (read-only): CI clones the project under /tmp. The guest's
# writable places live on a tmpfs over /mnt instead.
mount -t tmpfs -o mode=0755 tmpfs /mnt
mkdir -p /mnt/out /mnt/shared /mnt/scratch
P9='trans=virtio,version=9p2000.L,msize=512000,cache=none'
mount -t 9p -o "$P9" labout /mnt/out || fail "cannot mount the output share"
mount -t 9p -o "$P9" labshared /mnt/shared || fail "cannot mount the shared share"

lab_ctl=
for arg in $(cat /proc/cmdline); do
  case "$arg" in lab_ctl=*) lab_ctl=${arg#lab_ctl=} ;; esac
done
[ -r "$lab_ctl" ] || fail "settings file '$lab_ctl' not readable"
# shellcheck disable=SC1090
. "$lab_ctl"
hostname "guest$LAB_GUEST_INDEX"

# The shared root has no modules of this kernel: they are in the image package that
# lab/setup.sh unpacked (LAB_KERNEL_ROOT/lib/modules/<ver>). Every modprobe run in this
# guest gets "-d LAB_KERNEL_ROOT" through MODPROBE_OPTIONS (exported to the job too);
# the kernel's own module requests (autoloading, e.g. crypto) go through a wrapper.
[ -f "$LAB_KERNEL_ROOT/lib/modules/$(uname -r)/modules.dep" ] \
  || fail "no modules of $(uname -r) under '$LAB_KERNEL_ROOT' (run lab/setup.sh)"
export MODPROBE_OPTIONS="-d $LAB_KERNEL_ROOT"
mkdir -p /run/rxe-lab
printf '#!/bin/sh\nexec /sbin/modprobe -d %s "$@"\n' "$LAB_KERNEL_ROOT" > /run/rxe-lab/modprobe
chmod 0755 /run/rxe-lab/modprobe
echo /run/rxe-lab/modprobe > /proc/sys/kernel/modprobe
modprobe -a rdma_rxe ib_uverbs rdma_ucm || fail "modprobe rdma_rxe ib_uverbs rdma_ucm"
ip link set lo up
ip link set eth0 up || fail "no eth0"
ip addr add "$LAB_SELF_IP/24" dev eth0 || fail "ip addr add $LAB_SELF_IP/24"
ip route add 224.0.0.0/4 dev eth0 || fail "multicast route"
rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add rxe0"

# Ready = rxe0 port ACTIVE and every peer answers ARP/ICMP (guests boot at different
# speeds under TCG); bounded, and a peer that never shows up is the job's to report.
deadline=$(( $(cut -d. -f1 /proc/uptime) + LAB_READY_WAIT_S ))
until rdma link show rxe0/1 2>/dev/null | grep -q 'state ACTIVE'; do
  [ "$(cut -d. -f1 /proc/uptime)" -lt "$deadline" ] || fail "rxe0 port not ACTIVE"
  sleep 0.2
done
for ip in $LAB_GUEST_IPS; do
  [ "$ip" = "$LAB_SELF_IP" ] && continue
  until busybox ping -c 1 -W 1 "$ip" >/dev/null 2>&1; do
    if [ "$(cut -d. -f1 /proc/uptime)" -ge "$deadline" ]; then
      log "WARNING: peer $ip not reachable after ${LAB_READY_WAIT_S}s"
      break
    fi
  done
done
log "guest $LAB_GUEST_INDEX/$LAB_GUEST_COUNT ready at $(cut -d' ' -f1 /proc/uptime)s uptime: $LAB_SELF_IP rxe0 ACTIVE"

export LAB_GUEST_INDEX LAB_GUEST_COUNT LAB_GUEST_IPS LAB_SELF_IP
export LAB_OUT=/mnt/out LAB_SHARED=/mnt/shared LAB_RXE_DEV=rxe0
export JAVA_HOME=$LAB_JAVA_HOME TMPDIR=/mnt/scratch
export PATH="$JAVA_HOME/bin:$PATH"
unset LAB_JAVA_HOME LAB_READY_WAIT_S LAB_KERNEL_ROOT
cd "$LAB_CWD" 2>/dev/null || cd /
{
  sh "$LAB_SCRIPT" "$@"
  echo $? > /mnt/out/exit-code.part
} 2>&1 | tee /mnt/out/console.log
mv /mnt/out/exit-code.part /mnt/out/exit-code
log "job exited $(cat /mnt/out/exit-code)"
halt
