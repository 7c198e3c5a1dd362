// tflite_sparse.cpp — TFLite's sparse format (schema.fbs SparsityParameters) → dense bytes.
//
// A sparse tensor of rank n is traversed as n + b dimensions: the n original ones, of which those in
// block_map are split into (size / block) blocks, then the b block dimensions. traversal_order lists
// these n + b dimensions outermost first, and dim_metadata describes each level of that order: DENSE
// (dense_size entries, all stored) or SPARSE_CSR (for each position of the level above, the stored
// entries array_indices[array_segments[p] .. array_segments[p + 1])). A position counter runs through
// the levels (dense: parent · size + i; CSR: the entry's index j) and, at the innermost level, is the
// stored value's index.
#include "tflite_sparse.hpp"

#include <algorithm>
#include <cstring>

#include "kes/error.hpp"

namespace kes::ir {

namespace {

namespace tfl = kes::tflite;

// Dense results beyond this are refused: a small file must not make the importer allocate gigabytes.
constexpr uint64_t kMaxDenseBytes = uint64_t{1} << 30;

struct IndexVector {
    const void* data = nullptr;
    size_t size = 0;
    int width = 0;  // 4, 2 or 1 bytes

    int64_t operator[](size_t i) const {
        if (width == 4) return static_cast<const int32_t*>(data)[i];
        if (width == 2) return static_cast<const uint16_t*>(data)[i];
        return static_cast<const uint8_t*>(data)[i];
    }
};

IndexVector index_vector(tfl::SparseIndexVector type, const void* table) {
    IndexVector v;
    if (!table) return v;
    switch (type) {
        case tfl::SparseIndexVector::Int32Vector:
            if (const auto* values = static_cast<const tfl::Int32Vector*>(table)->values())
                v = {values->data(), values->size(), 4};
            break;
        case tfl::SparseIndexVector::Uint16Vector:
            if (const auto* values = static_cast<const tfl::Uint16Vector*>(table)->values())
                v = {values->data(), values->size(), 2};
            break;
        case tfl::SparseIndexVector::Uint8Vector:
            if (const auto* values = static_cast<const tfl::Uint8Vector*>(table)->values())
                v = {values->data(), values->size(), 1};
            break;
        default: break;
    }
    return v;
}

struct Level {
    int32_t dim = 0;  // traversed dimension: < rank an original one, else block dimension dim - rank
    bool dense = true;
    int64_t size = 0;  // entries of the traversed dimension
    IndexVector segments, indices;
};

class Densifier {
public:
    Densifier(const Shape& shape, size_t elem_size, const uint8_t* values, size_t value_count, uint8_t* out,
              const std::string& what)
        : shape_(shape), elem_(elem_size), values_(values), count_(value_count), out_(out), what_(what) {}

    std::vector<Level> levels;
    std::vector<int64_t> block_of;      // per original dim: its block size (1 when not blocked)
    std::vector<int32_t> block_dim_of;  // per original dim: its block dimension, or -1

    void walk(size_t level, int64_t pos) {
        if (level == levels.size()) {
            if (pos < 0 || static_cast<uint64_t>(pos) >= count_)
                bad("a stored element's position " + std::to_string(pos) + " is past its " + std::to_string(count_) +
                    " values");
            int64_t flat = 0;
            for (size_t d = 0; d < shape_.size(); ++d) {
                int64_t i = index_[d];
                if (block_dim_of[d] >= 0) i = i * block_of[d] + index_[static_cast<size_t>(block_dim_of[d])];
                flat = flat * shape_[d] + i;
            }
            std::memcpy(out_ + static_cast<size_t>(flat) * elem_, values_ + static_cast<size_t>(pos) * elem_, elem_);
            return;
        }
        const Level& l = levels[level];
        int64_t& index = index_[static_cast<size_t>(l.dim)];
        if (l.dense) {
            for (int64_t i = 0; i < l.size; ++i) {
                index = i;
                walk(level + 1, pos * l.size + i);
            }
            return;
        }
        if (pos < 0 || static_cast<size_t>(pos) + 1 >= l.segments.size)
            bad("level " + std::to_string(level) + " has no segment for position " + std::to_string(pos));
        const int64_t begin = l.segments[static_cast<size_t>(pos)], end = l.segments[static_cast<size_t>(pos) + 1];
        if (begin < 0 || end < begin || static_cast<size_t>(end) > l.indices.size)
            bad("level " + std::to_string(level) + " segment [" + std::to_string(begin) + ", " + std::to_string(end) +
                ") does not lie in its " + std::to_string(l.indices.size) + " indices");
        for (int64_t j = begin; j < end; ++j) {
            index = l.indices[static_cast<size_t>(j)];
            if (index < 0 || index >= l.size)
                bad("level " + std::to_string(level) + " index " + std::to_string(index) + " is outside [0, " +
                    std::to_string(l.size) + ")");
            walk(level + 1, j);
        }
    }

    void start(size_t dims) {
        index_.assign(dims, 0);
        walk(0, 0);
    }

    [[noreturn]] void bad(const std::string& why) const {
        fail(KES_ERR_CORRUPT_DATA, "%s: sparse data malformed: %s", what_.c_str(), why.c_str());
    }

private:
    const Shape& shape_;
    size_t elem_;
    const uint8_t* values_;
    uint64_t count_;
    uint8_t* out_;
    const std::string& what_;
    std::vector<int64_t> index_;
};

}  // namespace

std::vector<uint8_t> densify_tflite_constant(const tfl::SparsityParameters& sparsity, const Shape& shape,
                                             size_t elem_size, const uint8_t* values, size_t value_bytes,
                                             const std::string& what) {
    const size_t rank = shape.size();
    const auto* order = sparsity.traversal_order();
    const auto* block_map = sparsity.block_map();
    const auto* meta = sparsity.dim_metadata();
    const size_t blocks = block_map ? block_map->size() : 0;
    const size_t dims = rank + blocks;
    if (!order || !meta || order->size() != dims || meta->size() != dims)
        fail(KES_ERR_CORRUPT_DATA,
             "%s: sparsity needs %zu traversal_order and dim_metadata entries (rank %zu + %zu blocked), has %u and %u",
             what.c_str(), dims, rank, blocks, order ? order->size() : 0u, meta ? meta->size() : 0u);
    if (elem_size == 0 || value_bytes % elem_size != 0)
        fail(KES_ERR_CORRUPT_DATA, "%s: %zu bytes of sparse values are not whole %zu-byte elements", what.c_str(),
             value_bytes, elem_size);
    const int64_t elements = shape_elements(shape);
    if (static_cast<uint64_t>(elements) * elem_size > kMaxDenseBytes)
        fail(KES_ERR_UNSUPPORTED,
             "%s: dense size %s of %zu-byte elements exceeds Kestrel's 1 GiB limit for a sparse constant", what.c_str(),
             shape_string(shape).c_str(), elem_size);

    std::vector<uint8_t> dense(static_cast<size_t>(elements) * elem_size, 0);
    Densifier d(shape, elem_size, values, value_bytes / elem_size, dense.data(), what);
    d.block_of.assign(rank, 1);
    d.block_dim_of.assign(rank, -1);
    for (size_t k = 0; k < blocks; ++k) {
        const int32_t of = block_map->Get(static_cast<uint32_t>(k));
        if (of < 0 || static_cast<size_t>(of) >= rank || d.block_dim_of[static_cast<size_t>(of)] >= 0)
            d.bad("block_map entry " + std::to_string(of) + " is not a distinct dimension of rank " +
                  std::to_string(rank));
        d.block_dim_of[static_cast<size_t>(of)] = static_cast<int32_t>(rank + k);
    }
    std::vector<bool> seen(dims, false);
    for (size_t level = 0; level < dims; ++level) {
        const int32_t dim = order->Get(static_cast<uint32_t>(level));
        if (dim < 0 || static_cast<size_t>(dim) >= dims || seen[static_cast<size_t>(dim)])
            d.bad("traversal_order is not a permutation of the " + std::to_string(dims) + " dimensions");
        seen[static_cast<size_t>(dim)] = true;
        const tfl::DimensionMetadata* m = meta->Get(static_cast<uint32_t>(level));
        Level l;
        l.dim = dim;
        l.dense = m->format() == tfl::DimensionType::DENSE;
        if (static_cast<size_t>(dim) >= rank) {
            // A block dimension: its size is its level's dense_size, which must divide the blocked dim.
            const size_t of =
                static_cast<size_t>(block_map->Get(static_cast<uint32_t>(static_cast<size_t>(dim) - rank)));
            l.size = m->dense_size();
            if (l.size < 1 || shape[of] % l.size != 0)
                d.bad("block size " + std::to_string(l.size) + " does not divide dimension " + std::to_string(of) +
                      " of " + shape_string(shape));
            d.block_of[of] = l.size;
        }
        d.levels.push_back(l);
    }
    for (size_t level = 0; level < dims; ++level) {
        Level& l = d.levels[level];
        const tfl::DimensionMetadata* m = meta->Get(static_cast<uint32_t>(level));
        if (static_cast<size_t>(l.dim) < rank)
            l.size = shape[static_cast<size_t>(l.dim)] / d.block_of[static_cast<size_t>(l.dim)];
        if (l.dense) {
            if (m->dense_size() != l.size)
                d.bad("level " + std::to_string(level) + " is dense with size " + std::to_string(m->dense_size()) +
                      ", its dimension has " + std::to_string(l.size));
        } else if (m->format() == tfl::DimensionType::SPARSE_CSR) {
            l.segments = index_vector(m->array_segments_type(), m->array_segments());
            l.indices = index_vector(m->array_indices_type(), m->array_indices());
            // Non-decreasing segments visit each stored entry once (overlapping ones could repeat work
            // without bound).
            for (size_t i = 1; i < l.segments.size; ++i)
                if (l.segments[i] < l.segments[i - 1])
                    d.bad("level " + std::to_string(level) + " array_segments decrease at entry " + std::to_string(i));
        } else {
            d.bad("level " + std::to_string(level) + " has an unknown format");
        }
    }
    d.start(dims);
    return dense;
}

}  // namespace kes::ir
