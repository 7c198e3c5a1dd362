// tracker.cpp — the ByteTrack-style tracker behind kestrel/track.h: prediction, the three association
// rounds, track life and the embedding averages (the header's opening comment is the specification).
#include <algorithm>
#include <cmath>
#include <limits>

#include "kes/error.hpp"
#include "track.hpp"

namespace kes {
namespace track {
namespace {

constexpr float kMaxCoordinate = 1e6f;
constexpr float kForbidden = std::numeric_limits<float>::infinity();

bool in_unit(float v) {
    return v >= 0.0f && v <= 1.0f;  // false for NaN
}

float clamp_unit(float v) {
    return std::min(1.0f, std::max(0.0f, v));
}

struct Box {
    float x0, y0, x1, y1;
};

Box box_of(const Track& t) {
    const double w = std::max(t.kf[2].x, 0.0), h = std::max(t.kf[3].x, 0.0);
    return {static_cast<float>(t.kf[0].x - w / 2), static_cast<float>(t.kf[1].x - h / 2),
            static_cast<float>(t.kf[0].x + w / 2), static_cast<float>(t.kf[1].x + h / 2)};
}

}  // namespace

float iou(float ax0, float ay0, float ax1, float ay1, float bx0, float by0, float bx1, float by1) {
    const float iw = std::min(ax1, bx1) - std::max(ax0, bx0), ih = std::min(ay1, by1) - std::max(ay0, by0);
    if (!(iw > 0.0f && ih > 0.0f)) return 0.0f;
    const float a = (ax1 - ax0) * (ay1 - ay0), b = (bx1 - bx0) * (by1 - by0), inter = iw * ih;
    const float uni = a + b - inter;
    return uni > 0.0f ? inter / uni : 0.0f;
}

void check_config(const kes_tracker_config& c) {
    KES_REQUIRE(in_unit(c.low_score) && in_unit(c.high_score) && c.low_score <= c.high_score,
                "config needs 0 <= low_score <= high_score <= 1 (got low_score %g, high_score %g)",
                static_cast<double>(c.low_score), static_cast<double>(c.high_score));
    KES_REQUIRE(in_unit(c.new_track_score), "config->new_track_score must be in [0, 1] (got %g)",
                static_cast<double>(c.new_track_score));
    KES_REQUIRE(in_unit(c.match_iou), "config->match_iou must be in [0, 1] (got %g)", static_cast<double>(c.match_iou));
    KES_REQUIRE(in_unit(c.low_match_iou), "config->low_match_iou must be in [0, 1] (got %g)",
                static_cast<double>(c.low_match_iou));
    KES_REQUIRE(in_unit(c.tentative_match_iou), "config->tentative_match_iou must be in [0, 1] (got %g)",
                static_cast<double>(c.tentative_match_iou));
    KES_REQUIRE(c.confirm_hits >= 1, "config->confirm_hits must be >= 1 (got 0)");
    KES_REQUIRE(c.max_tracks >= 1 && c.max_tracks <= KES_TRACK_MAX_TRACKS,
                "config->max_tracks must be in [1, %u] (got %u)", KES_TRACK_MAX_TRACKS, c.max_tracks);
    KES_REQUIRE(c.max_detections >= 1 && c.max_detections <= KES_TRACK_MAX_DETECTIONS,
                "config->max_detections must be in [1, %u] (got %u)", KES_TRACK_MAX_DETECTIONS, c.max_detections);
    KES_REQUIRE(c.embedding_dim <= KES_TRACK_MAX_EMBEDDING_DIM, "config->embedding_dim must be <= %u (got %u)",
                KES_TRACK_MAX_EMBEDDING_DIM, c.embedding_dim);
    KES_REQUIRE(in_unit(c.appearance_weight), "config->appearance_weight must be in [0, 1] (got %g)",
                static_cast<double>(c.appearance_weight));
    KES_REQUIRE(c.max_appearance_distance >= 0.0f && c.max_appearance_distance <= 2.0f,
                "config->max_appearance_distance must be in [0, 2] (got %g)",
                static_cast<double>(c.max_appearance_distance));
    KES_REQUIRE(c.embedding_momentum >= 0.0f && c.embedding_momentum < 1.0f,
                "config->embedding_momentum must be in [0, 1) (got %g)", static_cast<double>(c.embedding_momentum));
    KES_REQUIRE(std::isfinite(c.position_noise) && c.position_noise > 0.0f && c.position_noise <= 1.0f,
                "config->position_noise must be in (0, 1] (got %g)", static_cast<double>(c.position_noise));
    KES_REQUIRE(std::isfinite(c.velocity_noise) && c.velocity_noise > 0.0f && c.velocity_noise <= 1.0f,
                "config->velocity_noise must be in (0, 1] (got %g)", static_cast<double>(c.velocity_noise));
    KES_REQUIRE((c.report & ~static_cast<uint32_t>(KES_TRACK_REPORT_ALL)) == 0,
                "config->report has bits 0x%x outside KES_TRACK_REPORT_ALL", c.report & ~KES_TRACK_REPORT_ALL);
}

Tracker::Tracker(const kes_tracker_config& config) : cfg_(config), dim_(config.embedding_dim) {
    tracks_.reserve(cfg_.max_tracks);
    free_slots_.reserve(cfg_.max_tracks);
    rows_.reserve(cfg_.max_tracks);
    rows_left_.reserve(cfg_.max_tracks);
    tentative_.reserve(cfg_.max_tracks);
    store_.resize(static_cast<size_t>(cfg_.max_tracks) * dim_);
    reset();
}

void Tracker::reset() {
    tracks_.clear();
    frames_ = 0;
    free_slots_.clear();
    for (uint32_t s = cfg_.max_tracks; s > 0; --s) free_slots_.push_back(s - 1);
    if (cfg_.embedding_dim == 0) dim_ = 0;
}

void Tracker::validate(const kes_detection* dets, size_t count, const float* embeddings, size_t embedding_dim) const {
    KES_REQUIRE(count <= cfg_.max_detections, "%zu detections exceed config.max_detections %u", count,
                cfg_.max_detections);
    KES_REQUIRE(dets != nullptr || count == 0, "dets is NULL with count %zu", count);
    for (size_t i = 0; i < count; ++i) {
        const kes_detection& d = dets[i];
        const float v[4] = {d.x0, d.y0, d.x1, d.y1};
        for (const float x : v)
            KES_REQUIRE(std::isfinite(x), "dets[%zu] has a non-finite coordinate (%g, %g, %g, %g)", i,
                        static_cast<double>(d.x0), static_cast<double>(d.y0), static_cast<double>(d.x1),
                        static_cast<double>(d.y1));
        KES_REQUIRE(std::isfinite(d.score), "dets[%zu].score is %g, not a finite number", i,
                    static_cast<double>(d.score));
        for (const float x : v)
            KES_REQUIRE(std::fabs(x) <= kMaxCoordinate,
                        "dets[%zu] has a coordinate beyond +-1e6 (%g, %g, %g, %g): not an image coordinate", i,
                        static_cast<double>(d.x0), static_cast<double>(d.y0), static_cast<double>(d.x1),
                        static_cast<double>(d.y1));
        KES_REQUIRE(d.x0 < d.x1 && d.y0 < d.y1,
                    "dets[%zu] is inverted or empty: needs x0 < x1 and y0 < y1 (got x0 %g, x1 %g, y0 %g, y1 %g)", i,
                    static_cast<double>(d.x0), static_cast<double>(d.x1), static_cast<double>(d.y0),
                    static_cast<double>(d.y1));
    }
    if (!embeddings) return;
    KES_REQUIRE(embedding_dim >= 1 && embedding_dim <= KES_TRACK_MAX_EMBEDDING_DIM,
                "embedding_dim must be in [1, %u] with embeddings (got %zu)", KES_TRACK_MAX_EMBEDDING_DIM,
                embedding_dim);
    KES_REQUIRE(dim_ == 0 || embedding_dim == dim_,
                "embedding_dim %zu differs from this tracker's %zu (set by config.embedding_dim or by its first "
                "update with embeddings; kes_tracker_reset forgets the latter)",
                embedding_dim, dim_);
    for (size_t i = 0; i < count; ++i)
        for (size_t k = 0; k < embedding_dim; ++k)
            KES_REQUIRE(std::isfinite(embeddings[i * embedding_dim + k]),
                        "embeddings of dets[%zu] has a non-finite value at %zu (%g)", i, k,
                        static_cast<double>(embeddings[i * embedding_dim + k]));
}

void Tracker::warm_up(size_t count, size_t embedding_dim) {
    // Growth only (reserve never shrinks), before anything changes: an out-of-memory leaves the tracker
    // as it was. Sized for a full table, so that warm-up depends on the busiest frame's detections only,
    // not on how many tracks a scene has accumulated.
    const size_t tracks = cfg_.max_tracks;
    if (embedding_dim) {
        det_emb_.reserve(count * embedding_dim);
        if (dim_ == 0) store_.reserve(static_cast<size_t>(cfg_.max_tracks) * embedding_dim);
    }
    det_has_emb_.reserve(count);
    det_used_.reserve(count);
    high_.reserve(count);
    low_.reserve(count);
    cols_left_.reserve(count);
    cols_left2_.reserve(count);
    cost_.reserve(tracks * count);
    r2c_.reserve(tracks);
    c2r_.reserve(count);
    assign_.reserve(tracks, count);
}

void Tracker::predict() {
    const double sp = cfg_.position_noise, sv = cfg_.velocity_noise;
    for (Track& t : tracks_) {
        if (t.since_seen > 0) t.kf[2].v = t.kf[3].v = 0;  // lost: keeps moving, stops changing size
        const double w = std::max(t.kf[2].x, 0.0), h = std::max(t.kf[3].x, 0.0);
        t.kf[0].predict(sp * w, sv * w);
        t.kf[1].predict(sp * h, sv * h);
        t.kf[2].predict(sp * w, sv * w);
        t.kf[3].predict(sp * h, sv * h);
        ++t.age;
        t.detection = -1;
    }
}

void Tracker::associate(const kes_detection* dets, const std::vector<uint32_t>& rows, const std::vector<uint32_t>& cols,
                        float gate, bool fuse, bool appearance, std::vector<uint32_t>* rows_left,
                        std::vector<uint32_t>* cols_left) {
    const size_t nr = rows.size(), nc = cols.size();
    rows_left->clear();
    cols_left->clear();
    cost_.resize(nr * nc);
    const float w_app = cfg_.appearance_weight, max_app = cfg_.max_appearance_distance;
    for (size_t r = 0; r < nr; ++r) {
        const Track& t = tracks_[rows[r]];
        const Box b = box_of(t);
        const bool t_emb = appearance && dim_ != 0 && t.has_embedding;
        const float* te = t_emb ? store_.data() + static_cast<size_t>(t.slot) * dim_ : nullptr;
        for (size_t c = 0; c < nc; ++c) {
            const kes_detection& d = dets[cols[c]];
            float& out = cost_[r * nc + c];
            out = kForbidden;
            if (cfg_.per_class && d.class_id != t.class_id) continue;
            float s = iou(b.x0, b.y0, b.x1, b.y1, d.x0, d.y0, d.x1, d.y1);
            if (fuse) s *= clamp_unit(d.score);
            if (!(s >= gate) || s <= 0.0f) continue;
            float cost = 1.0f - s;
            if (t_emb && det_has_emb_[cols[c]]) {
                const float* de = det_embedding(cols[c]);
                double dot = 0;
                for (size_t k = 0; k < dim_; ++k) dot += static_cast<double>(te[k]) * de[k];
                const float dist = static_cast<float>(1.0 - dot);
                if (dist > max_app) continue;
                cost = (1.0f - w_app) * cost + w_app * dist;
            }
            out = cost;
        }
    }
    r2c_.resize(nr);
    c2r_.resize(nc);
    assign_.solve(cost_.data(), nr, nc, r2c_.data(), c2r_.data());
    for (size_t r = 0; r < nr; ++r) {
        if (r2c_[r] < 0) {
            rows_left->push_back(rows[r]);
            continue;
        }
        const uint32_t di = cols[static_cast<size_t>(r2c_[r])];
        apply_match(tracks_[rows[r]], dets[di], di, appearance);
    }
    for (size_t c = 0; c < nc; ++c)
        if (c2r_[c] < 0) cols_left->push_back(cols[c]);
}

void Tracker::apply_match(Track& t, const kes_detection& d, uint32_t det_index, bool appearance) {
    const double w = static_cast<double>(d.x1) - d.x0, h = static_cast<double>(d.y1) - d.y0;
    const double rw = cfg_.position_noise * w, rh = cfg_.position_noise * h;
    t.kf[0].update((static_cast<double>(d.x0) + d.x1) / 2, rw);
    t.kf[1].update((static_cast<double>(d.y0) + d.y1) / 2, rh);
    t.kf[2].update(w, rw);
    t.kf[3].update(h, rh);
    ++t.hits;
    t.since_seen = 0;
    t.detection = static_cast<int32_t>(det_index);
    t.score = d.score;
    t.class_id = d.class_id;
    if (t.state != KES_TRACK_TENTATIVE || t.hits >= cfg_.confirm_hits) t.state = KES_TRACK_TRACKED;
    if (!appearance || dim_ == 0 || !det_has_emb_[det_index]) return;
    float* e = embedding(t.slot);
    const float* de = det_embedding(det_index);
    if (!t.has_embedding) {
        std::copy(de, de + dim_, e);
        t.has_embedding = true;
        return;
    }
    const float m = cfg_.embedding_momentum;
    double norm = 0;
    for (size_t k = 0; k < dim_; ++k) {
        e[k] = m * e[k] + (1.0f - m) * de[k];
        norm += static_cast<double>(e[k]) * e[k];
    }
    // Two unit vectors' blend is zero only when they are opposite and m = 0.5: keep the newest then.
    if (norm <= 0.0) {
        std::copy(de, de + dim_, e);
        return;
    }
    const float inv = static_cast<float>(1.0 / std::sqrt(norm));
    for (size_t k = 0; k < dim_; ++k) e[k] *= inv;
}

void Tracker::birth(const kes_detection& d, uint32_t det_index) {
    if (tracks_.size() >= cfg_.max_tracks) {
        // Full: the LOST track unmatched longest (the lowest id on ties) makes room, else no birth.
        size_t victim = tracks_.size();
        for (size_t i = 0; i < tracks_.size(); ++i)
            if (tracks_[i].state == KES_TRACK_LOST &&
                (victim == tracks_.size() || tracks_[i].since_seen > tracks_[victim].since_seen))
                victim = i;
        if (victim == tracks_.size()) return;
        free_slots_.push_back(tracks_[victim].slot);
        tracks_.erase(tracks_.begin() + static_cast<std::ptrdiff_t>(victim));
    }
    Track t{};
    t.id = next_id_++;
    // ByteTrack confirms its first frame's tracks at birth: with no history there is nothing to doubt
    // them against, and a stream's targets would otherwise all be hidden for confirm_hits − 1 frames.
    t.state = cfg_.confirm_hits <= 1 || frames_ == 0 ? KES_TRACK_TRACKED : KES_TRACK_TENTATIVE;
    const double w = static_cast<double>(d.x1) - d.x0, h = static_cast<double>(d.y1) - d.y0;
    const double sp = 2 * cfg_.position_noise, sv = 10 * cfg_.velocity_noise;
    t.kf[0].init((static_cast<double>(d.x0) + d.x1) / 2, sp * w, sv * w);
    t.kf[1].init((static_cast<double>(d.y0) + d.y1) / 2, sp * h, sv * h);
    t.kf[2].init(w, sp * w, sv * w);
    t.kf[3].init(h, sp * h, sv * h);
    t.score = d.score;
    t.class_id = d.class_id;
    t.detection = static_cast<int32_t>(det_index);
    t.hits = 1;
    t.slot = free_slots_.back();
    free_slots_.pop_back();
    if (dim_ != 0 && det_index < det_has_emb_.size() && det_has_emb_[det_index]) {
        std::copy(det_embedding(det_index), det_embedding(det_index) + dim_, embedding(t.slot));
        t.has_embedding = true;
    }
    tracks_.push_back(t);
}

size_t Tracker::update(const kes_detection* dets, size_t count, const float* embeddings, size_t embedding_dim,
                       kes_track* out, size_t capacity) {
    KES_REQUIRE(out != nullptr || capacity == 0, "out_tracks is NULL with capacity %zu", capacity);
    validate(dets, count, embeddings, embedding_dim);
    warm_up(count, embeddings ? embedding_dim : 0);

    // Nothing below allocates or fails.
    const bool appearance = embeddings != nullptr;
    if (appearance && dim_ == 0) {
        dim_ = embedding_dim;
        store_.resize(static_cast<size_t>(cfg_.max_tracks) * dim_);
    }
    det_has_emb_.assign(count, 0);
    if (appearance) {
        det_emb_.resize(count * dim_);
        for (size_t i = 0; i < count; ++i) {
            const float* src = embeddings + i * dim_;
            double norm = 0;
            for (size_t k = 0; k < dim_; ++k) norm += static_cast<double>(src[k]) * src[k];
            if (!(norm > 0.0)) continue;
            const double inv = 1.0 / std::sqrt(norm);
            for (size_t k = 0; k < dim_; ++k) det_emb_[i * dim_ + k] = static_cast<float>(src[k] * inv);
            det_has_emb_[i] = 1;
        }
    }

    predict();
    high_.clear();
    low_.clear();
    for (size_t i = 0; i < count; ++i) {
        if (dets[i].score >= cfg_.high_score)
            high_.push_back(static_cast<uint32_t>(i));
        else if (dets[i].score >= cfg_.low_score)
            low_.push_back(static_cast<uint32_t>(i));
    }

    // Round 1: confirmed tracks (tracked and lost) × high detections.
    rows_.clear();
    tentative_.clear();
    for (size_t i = 0; i < tracks_.size(); ++i)
        (tracks_[i].state == KES_TRACK_TENTATIVE ? tentative_ : rows_).push_back(static_cast<uint32_t>(i));
    associate(dets, rows_, high_, cfg_.match_iou, cfg_.fuse_score != 0, appearance, &rows_left_, &cols_left_);

    // Round 2: those tracked in the previous frame and still unmatched × low detections, by IoU alone
    // (ByteTrack: a lost track is not recovered from a low-score box).
    rows_.clear();
    for (const uint32_t r : rows_left_)
        if (tracks_[r].since_seen == 0) rows_.push_back(r);
    associate(dets, rows_, low_, cfg_.low_match_iou, false, false, &rows_left_, &cols_left2_);
    for (Track& t : tracks_) {
        if (t.state == KES_TRACK_TENTATIVE || t.detection >= 0) continue;
        t.state = KES_TRACK_LOST;
        if (++t.since_seen > cfg_.max_lost_frames) t.removed = true;
    }

    // Round 3: tentative tracks × the high detections round 1 left; a tentative miss removes the track.
    associate(dets, tentative_, cols_left_, cfg_.tentative_match_iou, cfg_.fuse_score != 0, appearance, &rows_left_,
              &cols_left2_);
    for (const uint32_t r : rows_left_) tracks_[r].removed = true;

    size_t kept = 0;
    for (size_t i = 0; i < tracks_.size(); ++i) {
        if (tracks_[i].removed) {
            free_slots_.push_back(tracks_[i].slot);
            continue;
        }
        tracks_[kept++] = tracks_[i];
    }
    tracks_.resize(kept);
    for (const uint32_t i : cols_left2_)
        if (dets[i].score >= cfg_.new_track_score) birth(dets[i], i);

    ++frames_;
    size_t n = 0;
    for (const Track& t : tracks_) {
        if (!(cfg_.report & (1u << t.state))) continue;
        if (n < capacity) {
            kes_track& o = out[n];
            const Box b = box_of(t);
            o.id = t.id;
            o.state = t.state;
            o.x0 = b.x0;
            o.y0 = b.y0;
            o.x1 = b.x1;
            o.y1 = b.y1;
            o.vx = static_cast<float>(t.kf[0].v);
            o.vy = static_cast<float>(t.kf[1].v);
            o.score = t.score;
            o.class_id = t.class_id;
            o.detection = t.detection;
            o.hits = t.hits;
            o.age = t.age;
            o.frames_since_seen = t.since_seen;
        }
        ++n;
    }
    return n;
}

}  // namespace track
}  // namespace kes
