// XCTest on Linux has no principal class, and SwiftPM's generated test runner calls XCTMain
// with no hook: the only code that runs before the first test is a load-time constructor.
// This one hands over to AsyncHarnessXCTestJUnit, which registers the JUnit observer when
// ASYNCHARNESS_JUNIT is set. The environment is read here, so nothing else runs at load
// time when it is not set.
#include <stdlib.h>

void asyncharness_xctest_junit_register_from_environment(void);

__attribute__((constructor)) static void asyncharness_xctest_junit_load(void) {
  if (getenv("ASYNCHARNESS_JUNIT") != NULL) {
    asyncharness_xctest_junit_register_from_environment();
  }
}
