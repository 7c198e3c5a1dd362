// track.hpp — kestrel/track.h's work in C++ (throwing kes::Error): the assignment solver, the per-track
// Kalman filter and the tracker itself, visible to the tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kestrel/track.h"

namespace kes {
namespace track {

// Minimum-cost assignment with forbidden pairs. cost[r · cols + c] for r < rows, c < cols; a non-finite
// entry (inf, NaN) forbids the pair. Among the assignments with the most allowed pairs, finds one of the
// lowest total cost: the rows and columns split into the connected components of the allowed pairs, and
// each component with more than one pair runs the shortest-augmenting-path Hungarian method (Jonker–
// Volgenant's formulation with row and column potentials, O(n² m) for n ≤ m), in double; a forbidden pair
// costs more than every allowed assignment together, so it is only used when no allowed pair is left and
// is then dropped. Scratch grows to the largest problem seen: after that, solve allocates nothing.
class Assignment {
public:
    // Writes row_to_col[rows] (−1: unmatched) and col_to_row[cols]; returns the number of pairs.
    size_t solve(const float* cost, size_t rows, size_t cols, int32_t* row_to_col, int32_t* col_to_row);
    // Grows the scratch for problems up to rows × cols (throws std::bad_alloc), so solve need not.
    void reserve(size_t rows, size_t cols);

private:
    void solve_dense(size_t n, size_t m);  // sub_ (n × m, n ≤ m) → match_ (row → column)
    uint32_t find(uint32_t x);

    std::vector<uint32_t> parent_;                 // union-find over rows, then columns
    std::vector<uint32_t> comp_rows_, comp_cols_;  // one component's members
    std::vector<uint32_t> order_, start_;          // members grouped by component root
    std::vector<double> sub_;                      // one component's costs (transposed when rows > cols)
    std::vector<double> u_, v_, minv_;             // potentials, slack
    std::vector<int32_t> p_, way_, match_;         // column → row (1-based), path, result
    std::vector<char> used_;
};

// One coordinate of the constant-velocity Kalman filter: position x and velocity v per frame, with the
// 2 × 2 covariance [p00 p01; p01 p11]. The tracker's 8-state filter is four of these (cx, cy, w, h): its
// F, H, Q and R are per-coordinate, so its covariance never couples them.
struct Kalman1 {
    double x = 0, v = 0, p00 = 0, p01 = 0, p11 = 0;

    void init(double z, double pos_std, double vel_std) {
        x = z;
        v = 0;
        p00 = pos_std * pos_std;
        p01 = 0;
        p11 = vel_std * vel_std;
    }
    // x ← x + v; P ← F P Fᵀ + diag(q_pos², q_vel²) with F = [1 1; 0 1].
    void predict(double q_pos, double q_vel) {
        x += v;
        p00 += 2 * p01 + p11 + q_pos * q_pos;
        p01 += p11;
        p11 += q_vel * q_vel;
    }
    // Measures x = z with std r: K = P Hᵀ / (H P Hᵀ + r²), H = [1 0].
    void update(double z, double r) {
        const double s = p00 + r * r;
        const double k0 = p00 / s, k1 = p01 / s, y = z - x;
        x += k0 * y;
        v += k1 * y;
        const double n00 = (1 - k0) * p00, n01 = (1 - k0) * p01, n11 = p11 - k1 * p01;
        p00 = n00;
        p01 = n01;
        p11 = n11;
    }
};

struct Track {
    uint64_t id;
    kes_track_state state;
    Kalman1 kf[4];  // cx, cy, w, h
    float score;
    int32_t class_id;
    int32_t detection;  // in this update's dets, −1
    uint32_t hits, age, since_seen;
    uint32_t slot;  // its row of the embedding store
    bool has_embedding;
    bool removed;  // dropped at the end of this update
};

class Tracker {
public:
    explicit Tracker(const kes_tracker_config& config);  // config already checked (check_config)

    // The C call's work; validates everything before changing anything.
    size_t update(const kes_detection* dets, size_t count, const float* embeddings, size_t embedding_dim,
                  kes_track* out, size_t capacity);
    void reset();
    size_t size() const { return tracks_.size(); }

private:
    void validate(const kes_detection* dets, size_t count, const float* embeddings, size_t embedding_dim) const;
    void warm_up(size_t count, size_t embedding_dim);
    void predict();
    // One association round: rows = tracks_[rows_[..]], columns = dets[cols_[..]]; matches are applied.
    void associate(const kes_detection* dets, const std::vector<uint32_t>& rows, const std::vector<uint32_t>& cols,
                   float gate, bool fuse, bool appearance, std::vector<uint32_t>* rows_left,
                   std::vector<uint32_t>* cols_left);
    void apply_match(Track& t, const kes_detection& d, uint32_t det_index, bool appearance);
    void birth(const kes_detection& d, uint32_t det_index);
    float* embedding(uint32_t slot) { return store_.data() + static_cast<size_t>(slot) * dim_; }
    const float* det_embedding(uint32_t i) const { return det_emb_.data() + static_cast<size_t>(i) * dim_; }

    kes_tracker_config cfg_;
    size_t dim_ = 0;  // embedding floats; 0 until known
    uint64_t next_id_ = 1;
    uint64_t frames_ = 0;        // updates since create or reset
    std::vector<Track> tracks_;  // by id ascending
    std::vector<uint32_t> free_slots_;
    std::vector<float> store_;  // max_tracks × dim_: the tracks' embedding averages (unit length)

    // Per-update scratch, grown during warm-up.
    std::vector<float> det_emb_;  // count × dim_, unit length (or zero)
    std::vector<char> det_has_emb_, det_used_;
    std::vector<uint32_t> high_, low_, rows_, rows_left_, cols_left_, cols_left2_, tentative_;
    std::vector<float> cost_;
    std::vector<int32_t> r2c_, c2r_;
    Assignment assign_;
};

// Throws KES_ERR_INVALID_ARGUMENT naming the first bad field.
void check_config(const kes_tracker_config& config);

// Intersection over union of two corner boxes (an empty box overlaps nothing).
float iou(float ax0, float ay0, float ax1, float ay1, float bx0, float by0, float bx1, float by1);

}  // namespace track
}  // namespace kes
