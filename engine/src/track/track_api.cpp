// track_api.cpp — kestrel/track.h's C entry points: struct_size reading, argument checks and the handle.
#include <cstring>
#include <memory>

#include "kes/error.hpp"
#include "kes/struct_size.hpp"
#include "track.hpp"

struct kes_tracker {
    explicit kes_tracker(const kes_tracker_config& config) : impl(config) {}
    kes::track::Tracker impl;
};

namespace {

// The first (and so far only) release of the config: this size stays fixed when fields are appended.
constexpr size_t kTrackerConfigV1 = KES_STRUCT_SIZE_THROUGH(kes_tracker_config, report);

}  // namespace

extern "C" {

void kes_tracker_config_init(kes_tracker_config* config) {
    if (!config) return;
    std::memset(config, 0, sizeof *config);
    config->struct_size = sizeof *config;
    config->high_score = 0.5f;
    config->low_score = 0.1f;
    config->new_track_score = 0.6f;
    config->match_iou = 0.2f;
    config->low_match_iou = 0.5f;
    config->tentative_match_iou = 0.3f;
    config->fuse_score = 1;
    config->per_class = 0;
    config->confirm_hits = 3;
    config->max_lost_frames = 30;
    config->max_tracks = KES_TRACK_DEFAULT_MAX_TRACKS;
    config->max_detections = KES_TRACK_DEFAULT_MAX_DETECTIONS;
    config->embedding_dim = 0;
    config->appearance_weight = 0.5f;
    config->max_appearance_distance = 0.6f;
    config->embedding_momentum = 0.9f;
    config->position_noise = 1.0f / 20.0f;
    config->velocity_noise = 1.0f / 160.0f;
    config->report = KES_TRACK_REPORT_TRACKED;
}

kes_status kes_tracker_create(const kes_tracker_config* config, kes_tracker** out_tracker) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_tracker);
        *out_tracker = nullptr;
        kes_tracker_config c;
        kes_tracker_config_init(&c);
        kes::read_struct(config, kTrackerConfigV1, "config", "kes_tracker_config", &c);
        kes::track::check_config(c);
        *out_tracker = std::make_unique<kes_tracker>(c).release();  // std::bad_alloc: KES_ERR_OUT_OF_MEMORY
        return KES_OK;
    });
}

void kes_tracker_destroy(kes_tracker* tracker) {
    delete tracker;
}

kes_status kes_tracker_update(kes_tracker* tracker, const kes_detection* dets, size_t count, const float* embeddings,
                              size_t embedding_dim, kes_track* out_tracks, size_t capacity, size_t* out_count) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(tracker);
        KES_REQUIRE_NOT_NULL(out_count);
        *out_count = tracker->impl.update(dets, count, embeddings, embedding_dim, out_tracks, capacity);
        return KES_OK;
    });
}

kes_status kes_tracker_reset(kes_tracker* tracker) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(tracker);
        tracker->impl.reset();
        return KES_OK;
    });
}

kes_status kes_tracker_track_count(const kes_tracker* tracker, size_t* out_count) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(tracker);
        KES_REQUIRE_NOT_NULL(out_count);
        *out_count = tracker->impl.size();
        return KES_OK;
    });
}

}  // extern "C"
