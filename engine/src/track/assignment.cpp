// assignment.cpp — minimum-cost assignment with forbidden pairs, for the tracker's association rounds.
//
// A tracker's cost matrix is mostly forbidden (a track can only match the few detections near it), so the
// allowed pairs are first split into connected components (union-find): a component of one track and one
// detection is decided without arithmetic, and the O(n² m) method runs only on the few components where
// tracks compete. On each, the Hungarian method in its shortest-augmenting-path form (Jonker & Volgenant
// 1987; the potentials version of e-maxx's "Hungarian algorithm", which handles n ≤ m rectangles): one
// row at a time is added and routed along the cheapest augmenting path under reduced costs, so the
// matching stays optimal for the rows added so far. Forbidden pairs get a cost above every allowed
// assignment's total, so the result has the most allowed pairs first and the lowest cost second; the
// forbidden pairs the method was forced to use are then dropped.
#include <algorithm>
#include <cmath>
#include <limits>

#include "track.hpp"

namespace kes {
namespace track {

void Assignment::reserve(size_t rows, size_t cols) {
    const size_t nodes = rows + cols, small = std::min(rows, cols), large = std::max(rows, cols);
    parent_.reserve(nodes);
    comp_rows_.reserve(rows);
    comp_cols_.reserve(cols);
    order_.reserve(nodes);
    start_.reserve(nodes + 1);
    sub_.reserve(small * large);
    u_.reserve(small + 1);
    v_.reserve(large + 1);
    minv_.reserve(large + 1);
    p_.reserve(large + 1);
    way_.reserve(large + 1);
    match_.reserve(small);
    used_.reserve(large + 1);
}

uint32_t Assignment::find(uint32_t x) {
    while (parent_[x] != x) {
        parent_[x] = parent_[parent_[x]];
        x = parent_[x];
    }
    return x;
}

void Assignment::solve_dense(size_t n, size_t m) {
    const double inf = std::numeric_limits<double>::infinity();
    u_.assign(n + 1, 0.0);
    v_.assign(m + 1, 0.0);
    p_.assign(m + 1, 0);
    way_.assign(m + 1, 0);
    for (size_t i = 1; i <= n; ++i) {
        p_[0] = static_cast<int32_t>(i);
        size_t j0 = 0;
        minv_.assign(m + 1, inf);
        used_.assign(m + 1, 0);
        do {
            used_[j0] = 1;
            const size_t i0 = static_cast<size_t>(p_[j0]);
            double delta = inf;
            size_t j1 = 0;
            const double* row = sub_.data() + (i0 - 1) * m;
            for (size_t j = 1; j <= m; ++j) {
                if (used_[j]) continue;
                const double cur = row[j - 1] - u_[i0] - v_[j];
                if (cur < minv_[j]) {
                    minv_[j] = cur;
                    way_[j] = static_cast<int32_t>(j0);
                }
                if (minv_[j] < delta) {
                    delta = minv_[j];
                    j1 = j;
                }
            }
            for (size_t j = 0; j <= m; ++j) {
                if (used_[j]) {
                    u_[static_cast<size_t>(p_[j])] += delta;
                    v_[j] -= delta;
                } else {
                    minv_[j] -= delta;
                }
            }
            j0 = j1;
        } while (p_[j0] != 0);
        do {
            const size_t j1 = static_cast<size_t>(way_[j0]);
            p_[j0] = p_[j1];
            j0 = j1;
        } while (j0 != 0);
    }
    match_.assign(n, -1);
    for (size_t j = 1; j <= m; ++j)
        if (p_[j] != 0) match_[static_cast<size_t>(p_[j]) - 1] = static_cast<int32_t>(j - 1);
}

size_t Assignment::solve(const float* cost, size_t rows, size_t cols, int32_t* row_to_col, int32_t* col_to_row) {
    std::fill(row_to_col, row_to_col + rows, -1);
    std::fill(col_to_row, col_to_row + cols, -1);
    if (rows == 0 || cols == 0) return 0;
    const size_t nodes = rows + cols;
    parent_.resize(nodes);
    for (size_t i = 0; i < nodes; ++i) parent_[i] = static_cast<uint32_t>(i);
    size_t edges = 0;
    for (size_t r = 0; r < rows; ++r)
        for (size_t c = 0; c < cols; ++c)
            if (std::isfinite(cost[r * cols + c])) {
                ++edges;
                const uint32_t a = find(static_cast<uint32_t>(r)), b = find(static_cast<uint32_t>(rows + c));
                if (a != b) parent_[std::max(a, b)] = std::min(a, b);
            }
    if (edges == 0) return 0;

    // Members grouped by root (a counting sort; each group in index order: rows before columns).
    // Roots are the lowest index of their set, so in index order every earlier parent is already a root.
    for (size_t i = 0; i < nodes; ++i) parent_[i] = find(static_cast<uint32_t>(i));
    start_.assign(nodes + 1, 0);
    for (size_t i = 0; i < nodes; ++i) ++start_[parent_[i] + 1];
    for (size_t i = 0; i < nodes; ++i) start_[i + 1] += start_[i];
    order_.resize(nodes);
    {
        // start_[root] is advanced while filling and restored after.
        for (size_t i = 0; i < nodes; ++i) order_[start_[parent_[i]]++] = static_cast<uint32_t>(i);
        for (size_t i = nodes; i > 0; --i) start_[i] = start_[i - 1];
        start_[0] = 0;
    }

    size_t pairs = 0;
    for (size_t root = 0; root < nodes; ++root) {
        const size_t b = start_[root], e = start_[root + 1];
        if (e - b < 2) continue;  // a lone row or column (every other root's group is empty)
        comp_rows_.clear();
        comp_cols_.clear();
        for (size_t k = b; k < e; ++k) {
            const uint32_t x = order_[k];
            if (x < rows)
                comp_rows_.push_back(x);
            else
                comp_cols_.push_back(static_cast<uint32_t>(x - rows));
        }
        const size_t nr = comp_rows_.size(), nc = comp_cols_.size();
        if (nr == 1 || nc == 1) {
            // One side alone: its cheapest allowed partner (lowest index on ties).
            size_t best_r = 0, best_c = 0;
            float best = std::numeric_limits<float>::infinity();
            for (const uint32_t r : comp_rows_)
                for (const uint32_t c : comp_cols_) {
                    const float x = cost[r * cols + c];
                    if (std::isfinite(x) && x < best) {
                        best = x;
                        best_r = r;
                        best_c = c;
                    }
                }
            row_to_col[best_r] = static_cast<int32_t>(best_c);
            col_to_row[best_c] = static_cast<int32_t>(best_r);
            ++pairs;
            continue;
        }
        // Forbidden pairs cost more than any assignment of allowed ones (see the file's comment).
        double lo = std::numeric_limits<double>::infinity(), hi = -lo;
        for (const uint32_t r : comp_rows_)
            for (const uint32_t c : comp_cols_) {
                const float x = cost[r * cols + c];
                if (!std::isfinite(x)) continue;
                lo = std::min(lo, static_cast<double>(x));
                hi = std::max(hi, static_cast<double>(x));
            }
        const bool transpose = nr > nc;
        const size_t n = transpose ? nc : nr, m = transpose ? nr : nc;
        const double big = hi + (hi - lo + 1.0) * static_cast<double>(n + 1);
        sub_.resize(n * m);
        for (size_t i = 0; i < nr; ++i)
            for (size_t j = 0; j < nc; ++j) {
                const float x = cost[comp_rows_[i] * cols + comp_cols_[j]];
                sub_[transpose ? j * m + i : i * m + j] = std::isfinite(x) ? static_cast<double>(x) : big;
            }
        solve_dense(n, m);
        for (size_t i = 0; i < n; ++i) {
            if (match_[i] < 0) continue;
            const size_t j = static_cast<size_t>(match_[i]);
            const uint32_t r = transpose ? comp_rows_[j] : comp_rows_[i];
            const uint32_t c = transpose ? comp_cols_[i] : comp_cols_[j];
            if (!std::isfinite(cost[r * cols + c])) continue;
            row_to_col[r] = static_cast<int32_t>(c);
            col_to_row[c] = static_cast<int32_t>(r);
            ++pairs;
        }
    }
    return pairs;
}

}  // namespace track
}  // namespace kes
