#include "image.hpp"

namespace kespy {
void register_video(py::module_&) {}
}  // namespace kespy
