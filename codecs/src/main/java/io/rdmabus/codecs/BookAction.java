package io.rdmabus.codecs;

/** What happened to a book level in a {@link BookLevelUpdate}. */
public enum BookAction {
    /** A level was inserted at the index; levels below it shift down. */
    NEW,
    /** The size at an existing level changed. */
    CHANGE,
    /** The level at the index was removed; levels below it shift up. */
    DELETE
}
