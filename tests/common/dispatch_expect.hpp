// dispatch_expect.hpp — the table each module must choose on this CPU, stated by the tests themselves:
// every table's gate (all the features its file is compiled for), fastest first. A module whose gate or
// order differs fails its dispatch test; under the CPU matrix (qemu Haswell, Nehalem, cortex-a53/a76)
// the same tests prove each CPU model gets the table it allows.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <vector>

#include "kestrel/cpu.h"

namespace kes_test {

struct TableGate {
    uint32_t features;
    const char* table;
};

// The first gate this CPU passes (kes_cpu_has: KES_CPU_DISABLE applies), else `fallback`.
inline std::string expected_table(std::initializer_list<TableGate> gates, const char* fallback) {
    for (const TableGate& g : gates)
        if (kes_cpu_has(g.features)) return g.table;
    return fallback;
}

// Every table the CPU can run: `fallback` first, then the gates it passes, in order.
inline std::vector<std::string> expected_usable(std::initializer_list<TableGate> gates, const char* fallback) {
    std::vector<std::string> all{fallback};
    for (const TableGate& g : gates)
        if (kes_cpu_has(g.features)) all.push_back(g.table);
    return all;
}

// Names of a module's usable tables, for comparison with expected_usable.
template <class Table>
std::vector<std::string> names_of(const std::vector<const Table*>& tables) {
    std::vector<std::string> names;
    for (const Table* t : tables) names.push_back(t->name);
    return names;
}

// Says in the test log which table ran: the matrix's logs then show each CPU model's choice.
inline void record_table(const char* module, const std::string& table) {
    ::testing::Test::RecordProperty(std::string(module) + "_table", table);
    std::printf("[ dispatch ] %s: %s on a CPU with: ", module, table.c_str());
    char features[256];
    if (kes_cpu_describe(features, sizeof features, nullptr) == KES_OK) std::printf("%s", features);
    std::printf("\n");
}

}  // namespace kes_test
