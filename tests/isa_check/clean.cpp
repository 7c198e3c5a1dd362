// What the rule allows: a table built on the first call of its getter (after the CPU check) and
// helpers in an anonymous namespace. check_isa_objects.cmake accepts it.
namespace {
struct Table {
    const char* name;
    int (*twice)(int);
};
int twice(int x) {
    return 2 * x;
}
}  // namespace

const void* isa_probe_table() {
    static const Table table = {"probe", twice};
    return &table;
}
