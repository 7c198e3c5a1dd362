// kestrel.aipp: placeholder filled below.
#include "image.hpp"

namespace kespy {
void register_aipp(py::module_&) {}
}  // namespace kespy
