#!/bin/sh
# missing_test_dependency.sh NAME WHAT — the test <NAME>.DependencyMissing (KestrelTesting.cmake,
# kes_missing_test_dependency) that stands for tests the build left out because WHAT is missing: a skip
# (exit 77) on a developer's machine, a failure when KES_REQUIRE_TEST_DEPS is set (CI), so the summary
# counts what did not run and CI cannot pass by not running it (issue 15 §4).
. "$(dirname "$0")/test_dependency.sh"
skip_missing "$1: $2 is missing (./kestrel.sh deps all installs it)" >&2
