/// Nothing to test yet.
public enum Empty {}
