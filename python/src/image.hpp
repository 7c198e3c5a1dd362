// kestrel.Image: a kes_image owned by Python, shared with the NumPy views of its planes.
#pragma once

#include "common.hpp"

namespace kespy {

// The pixels: a kes_image Kestrel allocated (released here) or one wrapping a Python buffer (kept
// exported here). Shared by the Image and every Plane taken from it, so a NumPy view never outlives
// the bytes it shows: Image.close() drops the Image's share, and the last view frees the rest.
struct ImageData {
    kes_image image{};
    std::unique_ptr<Bytes> borrowed;  // kes_image_wrap'ed memory (a writable buffer)
    py::object owner;                 // the object that buffer came from
    ~ImageData();
};

struct Image {
    std::shared_ptr<ImageData> data;

    // The shared pixels; ClosedError after close().
    const std::shared_ptr<ImageData>& get() const {
        if (!data) throw ClosedError("Image");
        return data;
    }
    const kes_image& image() const { return get()->image; }
    void close() { data.reset(); }

    // Takes ownership of an image a Kestrel call filled.
    static Image adopt(const kes_image& image);
};

// Several Images as kes_image structs for one C call, their pixels kept alive meanwhile (destroy
// with the GIL held).
struct ImageList {
    explicit ImageList(const py::handle& images, const char* what);
    std::vector<kes_image> images;
    std::vector<std::shared_ptr<ImageData>> keep;
};

}  // namespace kespy
