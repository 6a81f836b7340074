// The floor of the colour suite: Little CMS alone, called from C, converting `pixels` RGBA8 pixels in place from
// the ICC profile given to its built-in sRGB with the flags the library uses (relative colorimetric, black-point
// compensation, alpha copied, no one-pixel cache). Returns the thread CPU nanoseconds of cmsDoTransform alone,
// or -1 when the profile or the transform is refused.
#include "bench_harness.h"
#include <lcms2.h>
#include <stdlib.h>

int64_t bench_lcms_transform_rgba8(const uint8_t *profile, size_t profile_size, uint8_t *pixels, size_t count) {
    cmsHPROFILE source = cmsOpenProfileFromMem(profile, (cmsUInt32Number)profile_size);
    cmsHPROFILE srgb = cmsCreate_sRGBProfile();
    int64_t elapsed = -1;
    if (source && srgb) {
        cmsHTRANSFORM transform = cmsCreateTransform(source, TYPE_RGBA_8, srgb, TYPE_RGBA_8, INTENT_RELATIVE_COLORIMETRIC,
            cmsFLAGS_NOCACHE | cmsFLAGS_BLACKPOINTCOMPENSATION | cmsFLAGS_COPY_ALPHA);
        if (transform) {
            uint64_t start = bench_thread_cpu_ns();
            cmsDoTransform(transform, pixels, pixels, (cmsUInt32Number)count);
            elapsed = (int64_t)(bench_thread_cpu_ns() - start);
            cmsDeleteTransform(transform);
        }
    }
    if (source) cmsCloseProfile(source);
    if (srgb) cmsCloseProfile(srgb);
    return elapsed;
}
