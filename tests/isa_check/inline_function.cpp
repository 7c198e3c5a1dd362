// An inline function emitted out of line (a weak symbol): the linker keeps one copy for the whole
// program, possibly this file's, compiled with ISA flags. check_isa_objects.cmake refuses it.
inline __attribute__((noinline)) int isa_probe_shared(int x) {
    return x * 3 + 1;
}

int isa_probe_use(int x) {
    return isa_probe_shared(x);
}
