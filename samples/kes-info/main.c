/* kes-info — what Kestrel sees on this machine: version, build, backend (CPU or Ascend: library, SoC,
 * run mode, devices, and why not Ascend), board profile, CPU, and a memory-pool self-check. Written in C
 * against the public API only, as an app would use it.
 *
 *   kes-info               print everything
 *   kes-info --board 310   print with another board profile active (or set KES_BOARD)
 *   kes-info --backend B   auto (default), cpu or ascend (or set KES_BACKEND); exits 1 when B is unavailable
 *   kes-info --check       also exit non-zero if the self-check fails (used by the test suite)
 *   kes-info --model M.kom describe a converted model: origin, inputs and outputs, gears, AIPP, memory
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kestrel/kestrel.h"

static void print_profile(const kes_board_profile* p) {
    printf("board profile      %s — %s\n", p->name, p->description);
    printf("  JPEGD            stride align %u x %u, %u..%u px\n", p->jpegd_width_align, p->jpegd_height_align,
           p->jpegd_min_dim, p->jpegd_max_dim);
    printf("  JPEGE            width stride align %u, %u..%u px\n", p->jpege_width_align, p->jpege_min_dim,
           p->jpege_max_dim);
    printf("  PNGD             stride align %u x %u, %u..%u px\n", p->pngd_width_align, p->pngd_height_align,
           p->pngd_min_dim, p->pngd_max_dim);
    printf("  VPC              out stride align %u x %u, in %ux%u..%u (NV12 %u), out max %ux%u\n", p->vpc_width_align,
           p->vpc_height_align, p->vpc_min_width, p->vpc_min_height, p->vpc_max_input_dim, p->vpc_max_input_dim_nv12,
           p->vpc_max_output_width, p->vpc_max_output_height);
    printf("  VPC ROI          parity rule %s, paste left align %u, <= %u ROIs per batch, scale 1/%u..%u\n",
           p->vpc_roi_parity ? "on (left/top even, right/bottom odd)" : "off", p->vpc_paste_left_align,
           p->vpc_max_batch_rois, p->vpc_scale_min_den, p->vpc_scale_max);
    printf("  VDEC             stride align %u x %u, %u..%u px, %u channels\n", p->vdec_width_align,
           p->vdec_height_align, p->vdec_min_dim, p->vdec_max_dim, p->vdec_max_channels);
    printf("  AIPP             src <= %u px, dynamic out width <= %u, resize %s\n", p->aipp_max_src_dim,
           p->aipp_dynamic_max_out_width, p->aipp_supports_resize ? "yes" : "no");
}

/* Which backend serves device memory and models, and why not Ascend when it is not. Returns the status
 * of kes_backend_query (an error only when Ascend was required and is unavailable). `refused` is the
 * backend --backend asked for when kes_backend_set refused it (why: `refusal`), else KES_BACKEND_NONE:
 * then nothing serves what was asked, whatever the earlier choice still in place would. */
static kes_status print_backend(kes_backend refused, const char* refusal) {
    if (refused != KES_BACKEND_NONE) {
        printf("backend            none (requested %s)\n", kes_backend_name(refused));
        printf("  why not %-8s %s\n", kes_backend_name(refused), refusal);
        return KES_ERR_NOT_FOUND;
    }
    kes_backend_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    const kes_status st = kes_backend_query(&info);
    printf("backend            %s (requested %s)\n", kes_backend_name(info.active), kes_backend_name(info.requested));
    if (info.runtime_loaded) {
        printf("  AscendCL         %s%s\n", info.library, info.app_owns_runtime ? " (aclInit by the app)" : "");
        printf("  SoC              %s, device %d of %u\n", info.soc_name[0] ? info.soc_name : "unknown", info.device_id,
               info.device_count);
        printf("  run mode         %s: device memory %s\n",
               info.run_mode == KES_ASCEND_RUN_MODE_HOST ? "ACL_HOST (PCIe card)" : "ACL_DEVICE (on the board)",
               info.host_accessible ? "CPU-addressable" : "not CPU-addressable (copy with kes_mem_copy)");
    }
    if (info.active != KES_BACKEND_ASCEND) printf("  why not Ascend   %s\n", info.reason);
    return st;
}

/* Allocates frames the way a decoder would (1080p NV12 with JPEGD strides, model tensors, small
 * buffers), frees half, checks every block's alignment, the pool's invariants and its statistics. */
static int pool_self_check(void) {
    kes_mem_pool_config cfg;
    kes_mem_pool_config_init(&cfg);
    cfg.initial_bytes = 32u << 20;
    cfg.name = "self-check";
    kes_mem_pool* pool = NULL;
    if (kes_mem_pool_create(&cfg, &pool) != KES_OK) {
        printf("pool self-check: FAILED to create pool: %s\n", kes_last_error());
        return 1;
    }
    enum { N = 24 };
    kes_image frames[N];
    memset(frames, 0, sizeof frames);
    int failures = 0;
    uint32_t ws = 0, hs = 0;
    kes_image_strides(KES_PIXEL_NV12, 1920, 1080, KES_STRIDE_JPEGD, kes_board_get(), &ws, &hs);
    for (int i = 0; i < N; ++i) {
        const uint32_t w = (i % 3 == 0) ? 1920 : (i % 3 == 1 ? 224 : 33);
        const uint32_t h = (i % 3 == 0) ? 1080 : (i % 3 == 1 ? 224 : 17);
        const uint32_t sw = (i % 3 == 0) ? ws : 0, sh = (i % 3 == 0) ? hs : 0;
        kes_status st = kes_image_alloc(&frames[i], pool, KES_PIXEL_NV12, w, h, sw, sh);
        if (st != KES_OK) {
            printf("  alloc %d failed: %s\n", i, kes_last_error());
            ++failures;
            continue;
        }
        if (((uintptr_t)frames[i].data % KES_MEM_ALIGNMENT) != 0) {
            printf("  block %d at %p is not %u-byte aligned\n", i, frames[i].data, KES_MEM_ALIGNMENT);
            ++failures;
        }
        memset(frames[i].data, i, frames[i].size);
    }
    for (int i = 0; i < N; i += 2) kes_image_release(&frames[i]);
    void* stray = malloc(64);
    if (kes_mem_pool_free(pool, stray) == KES_OK) {
        printf("  a foreign pointer was accepted by kes_mem_pool_free\n");
        ++failures;
    }
    free(stray);
    if (kes_mem_pool_check(pool) != KES_OK) {
        printf("  invariant check: %s\n", kes_last_error());
        ++failures;
    }
    kes_mem_pool_stats stats;
    kes_mem_pool_get_stats(pool, &stats);
    printf(
        "pool               capacity %zu B, in use %zu B in %llu blocks, peak %zu B, largest free %zu B, "
        "fragmentation %.3f\n",
        stats.capacity_bytes, stats.in_use_bytes, (unsigned long long)stats.live_blocks, stats.peak_in_use_bytes,
        stats.largest_free_block, stats.fragmentation);
    for (int i = 1; i < N; i += 2) kes_image_release(&frames[i]);
    kes_mem_pool_get_stats(pool, &stats);
    if (stats.in_use_bytes != 0 || stats.free_blocks != 1) {
        printf("  after freeing everything: %zu B still in use, %llu free ranges (expected 0 and 1)\n",
               stats.in_use_bytes, (unsigned long long)stats.free_blocks);
        ++failures;
    }
    kes_mem_pool_destroy(pool);
    printf("pool self-check: %s\n", failures ? "FAILED" : "OK");
    return failures ? 1 : 0;
}

#if KES_HAVE_ENGINE
static void print_tensor(const char* what, size_t i, const char* name, const kes_tensor* t) {
    printf("  %s %zu  %-24s %s %s [", what, i, name, kes_dtype_name(t->dtype), kes_layout_name(t->layout));
    for (uint32_t d = 0; d < t->ndim; ++d) printf(d ? ",%lld" : "%lld", (long long)t->shape[d]);
    printf("]\n");
}

/* What a .kom file holds, through the public API (the model is verified as any load verifies it). */
/* Whether an aipp_op text (kes_model_input_aipp) says "aipp_mode: dynamic": such an input takes its
 * parameters at run time, so kes_model_execute_images needs kes_model_context_set_dynamic_aipp first. */
static int aipp_is_dynamic(const char* text) {
    const char* mode = strstr(text, "aipp_mode");
    if (!mode) return 0;
    const char* end = strchr(mode, '\n');
    const char* dyn = strstr(mode, "dynamic");
    return dyn && (!end || dyn < end);
}

static int describe_model(const char* path) {
    kes_model* model = NULL;
    if (kes_model_load_from_file(path, KES_MODEL_LOAD_MMAP, &model) != KES_OK) {
        fprintf(stderr, "kes-info: %s\n", kes_last_error());
        return 1;
    }
    kes_model_metadata md;
    memset(&md, 0, sizeof md);
    md.struct_size = sizeof md;
    kes_model_get_metadata(model, &md);
    printf("model              %s (.kom format %u)\n", path, md.format_version);
    printf("  converted        from %s by %s for board %s\n", md.source_format, md.converter_version, md.target_board);
    printf("  source sha256    %s\n", md.source_hash[0] ? md.source_hash : "-");
    size_t inputs = 0, outputs = 0;
    kes_model_input_count(model, &inputs);
    kes_model_output_count(model, &outputs);
    for (size_t i = 0; i < inputs; ++i) {
        const char* name = NULL;
        const char* aipp = NULL;
        kes_tensor t;
        kes_model_input_name(model, i, &name);
        kes_model_input_desc(model, i, &t);
        print_tensor("input ", i, name, &t);
        kes_model_input_aipp(model, i, &aipp);
        if (aipp && aipp_is_dynamic(aipp))
            printf(
                "    AIPP dynamic   (kes_model_execute_images feeds it images, once "
                "kes_model_context_set_dynamic_aipp gave the context its parameters)\n");
        else if (aipp)
            printf("    AIPP static    (kes_model_execute_images feeds it images)\n");
    }
    for (size_t i = 0; i < outputs; ++i) {
        const char* name = NULL;
        kes_tensor t;
        kes_model_output_name(model, i, &name);
        kes_model_output_desc(model, i, &t);
        print_tensor("output", i, name, &t);
    }
    int64_t gears[100 * 2];
    size_t count = 0;
    kes_model_batch_gears(model, gears, 100, &count);
    if (count) {
        printf("  batch gears     ");
        for (size_t g = 0; g < count && g < 100; ++g) printf(" %lld", (long long)gears[g]);
        printf("\n");
    }
    kes_model_image_sizes(model, gears, 100, &count);
    if (count) {
        printf("  image gears     ");
        for (size_t g = 0; g < count && g < 100; ++g)
            printf(" %lldx%lld", (long long)gears[2 * g], (long long)gears[2 * g + 1]);
        printf("\n");
    }
    size_t work = 0, weights = 0, arena = 0, ideal = 0;
    kes_model_get_size(model, &work, &weights);
    kes_model_get_memory_plan(model, &arena, &ideal);
    printf("  memory           work %zu B (arena; ideal %zu B, %.2fx), weights %zu B\n", work, ideal,
           ideal ? (double)arena / (double)ideal : 0.0, weights);
    kes_model_unload(model);
    return 0;
}
#endif

/* The kernel table each module chose for this CPU (kestrel/cpu.h): what KES_CPU_DISABLE changes. */
static void print_kernels(void) {
    printf("kernels            fp16 %s", kes_fp16_kernels_name());
#if KES_HAVE_DVPP
    printf(", vpc %s", kes_vpc_kernels_name());
#endif
#if KES_HAVE_AIPP
    printf(", aipp %s", kes_aipp_kernels_name());
#endif
#if KES_HAVE_ENGINE
    printf(", engine %s, detect %s", kes_engine_kernels_name(), kes_detect_kernels_name());
#endif
#if KES_HAVE_FV
    printf(", fv %s", kes_fv_kernels_name());
#endif
    printf("\n");
}

int main(int argc, char** argv) {
    int check = 0;
    kes_backend refused = KES_BACKEND_NONE; /* --backend B that kes_backend_set refused */
    char refusal[512] = "";
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--check") == 0) {
            check = 1;
        } else if (strcmp(argv[i], "--board") == 0 && i + 1 < argc) {
            kes_board b;
            if (kes_board_from_name(argv[++i], &b) != KES_OK || kes_board_set(b) != KES_OK) {
                fprintf(stderr, "kes-info: %s\n", kes_last_error());
                return 2;
            }
        } else if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
            kes_backend b;
            if (kes_backend_from_name(argv[++i], &b) != KES_OK) {
                fprintf(stderr, "kes-info: %s\n", kes_last_error());
                return 2;
            }
            /* An unavailable backend is reported below with the reason, and fails the run: what was asked
             * for is not what serves (the earlier choice stays in place). */
            refused = KES_BACKEND_NONE;
            if (kes_backend_set(b) != KES_OK) {
                refused = b;
                snprintf(refusal, sizeof refusal, "%s", kes_last_error());
                fprintf(stderr, "kes-info: --backend %s: %s\n", kes_backend_name(b), refusal);
            }
        } else if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) {
#if KES_HAVE_ENGINE
            return describe_model(argv[++i]);
#else
            fprintf(stderr, "kes-info: this build has no engine module\n");
            return 1;
#endif
        } else {
            const int help = strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0;
            fprintf(help ? stdout : stderr,
                    "usage: kes-info [--board 310|310B|host] [--backend auto|cpu|ascend] [--check] [--model M.kom]\n");
            return help ? 0 : 2;
        }
    }
    if (kes_version() / 10000 != KES_VERSION_MAJOR) {
        fprintf(stderr, "kes-info: headers are Kestrel %s but the library is %s\n", KES_VERSION_STRING,
                kes_version_string());
        return 1;
    }
    printf("Kestrel            %s\n", kes_version_string());
    printf("build              %s\n", kes_build_info());
    printf("modules            sdk%s%s%s%s\n", KES_HAVE_DVPP ? " dvpp" : "", KES_HAVE_AIPP ? " aipp" : "",
           KES_HAVE_ENGINE ? " engine" : "", KES_HAVE_FV ? " fv" : "");
    char features[256];
    kes_cpu_describe(features, sizeof features, NULL);
    printf("cpu                %s, %u online CPUs, features: %s\n", kes_cpu_arch(), kes_cpu_count(), features);
    print_kernels();
    printf("thread pool        %u threads (KES_NUM_THREADS to change)\n",
           kes_thread_pool_size(kes_thread_pool_default()));
    /* Before the board profile: on a board (or the simulator) the SoC chooses the default profile. */
    const kes_status backend = print_backend(refused, refusal);
    print_profile(kes_board_active_profile());
    const int failed = pool_self_check() || backend != KES_OK;
    /* KES_TRACE is written at exit, too late for the exit status: a trace that cannot be written fails here. */
    if (kes_trace_enabled() && kes_trace_stop() != KES_OK) {
        fprintf(stderr, "kes-info: KES_TRACE: %s\n", kes_last_error());
        return 1;
    }
    /* A backend asked for on the command line and unavailable fails the run, --check or not. */
    return ((check && failed) || refused != KES_BACKEND_NONE) ? 1 : 0;
}
