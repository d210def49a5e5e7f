// Nothing to import: this target only runs AsyncHarnessXCTestJUnit's registration when the
// test executable is loaded (see Loader.c).
