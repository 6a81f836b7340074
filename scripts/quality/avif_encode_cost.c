// The CPU of one AVIF encode as AVIFEncoder makes it (libavif, libaom, 8-bit 4:4:4, one thread, one quantizer),
// with libaom's codec-specific options: docs/quality.md, "AVIF at speed 8 with libaom's options".
//
//   cc -O2 -o /tmp/avif_encode_cost scripts/quality/avif_encode_cost.c -lavif
//   /tmp/avif_encode_cost IMAGE.rgba WIDTH HEIGHT SPEED QUANTIZER REPEATS [key=value ...]
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null /tmp/avif_encode_cost ... 1 [key=value ...]
//
// IMAGE.rgba is raw straight RGBA (Pillow: `Image.open(p).convert("RGBA").tobytes()`). Prints the file's bytes and
// the CPU time of each encode (RGB to YUV, encode, container; CLOCK_PROCESS_CPUTIME_ID) in ms: min, median, mean.
// On a shared machine CPU times vary by ±20 %; callgrind's instruction count ("Collected") does not, and one process
// of REPEATS 1 adds about 6 M instructions of start-up.
#include <avif/avif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int ascending(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: %s IMAGE.rgba WIDTH HEIGHT SPEED QUANTIZER REPEATS [key=value ...]\n", argv[0]);
        return 2;
    }
    int width = atoi(argv[2]), height = atoi(argv[3]), speed = atoi(argv[4]), quantizer = atoi(argv[5]);
    int repeats = atoi(argv[6]);
    if (width <= 0 || height <= 0 || width > 16384 || height > 16384 || repeats <= 0) return 2;
    size_t length = (size_t)width * (size_t)height * 4;
    uint8_t *pixels = malloc(length);
    double *times = calloc((size_t)repeats, sizeof(double));
    FILE *file = fopen(argv[1], "rb");
    int status = 0;
    if (!pixels || !times || !file || fread(pixels, 1, length, file) != length) {
        fprintf(stderr, "cannot read %zu bytes of %s\n", length, argv[1]);
        status = 3;
        goto done;
    }
    size_t bytes = 0;
    for (int i = 0; i < repeats && status == 0; i++) {
        double start = cpu_ms();
        avifImage *image = avifImageCreate(width, height, 8, AVIF_PIXEL_FORMAT_YUV444);
        avifEncoder *encoder = avifEncoderCreate();
        avifRWData output = AVIF_DATA_EMPTY;
        avifRGBImage rgb;
        avifRGBImageSetDefaults(&rgb, image);
        rgb.depth = 8;
        rgb.format = AVIF_RGB_FORMAT_RGBA;
        rgb.pixels = pixels;
        rgb.rowBytes = (uint32_t)width * 4;
        encoder->minQuantizer = encoder->maxQuantizer = quantizer;
        encoder->minQuantizerAlpha = encoder->maxQuantizerAlpha = quantizer < 10 ? quantizer : 10;
        encoder->speed = speed;
        encoder->maxThreads = 1;
        encoder->codecChoice = AVIF_CODEC_CHOICE_AOM;
        encoder->timescale = 1000;
        for (int k = 7; k < argc; k++) {
            char key[128];
            const char *equals = strchr(argv[k], '=');
            if (!equals || equals - argv[k] >= (long)sizeof key) {
                fprintf(stderr, "not key=value: %s\n", argv[k]);
                status = 4;
                break;
            }
            snprintf(key, sizeof key, "%.*s", (int)(equals - argv[k]), argv[k]);
            avifEncoderSetCodecSpecificOption(encoder, key, equals + 1);
        }
        avifResult result = status ? AVIF_RESULT_OK : avifImageRGBToYUV(image, &rgb);
        if (!status && result == AVIF_RESULT_OK) result = avifEncoderAddImage(encoder, image, 1, AVIF_ADD_IMAGE_FLAG_SINGLE);
        if (!status && result == AVIF_RESULT_OK) result = avifEncoderFinish(encoder, &output);
        if (!status && result != AVIF_RESULT_OK) {
            fprintf(stderr, "%s: %s\n", avifResultToString(result), encoder->diag.error);
            status = 5;
        }
        bytes = output.size;
        avifRWDataFree(&output);
        avifEncoderDestroy(encoder);
        avifImageDestroy(image);
        times[i] = cpu_ms() - start;
    }
    if (status == 0) {
        double sum = 0;
        for (int i = 0; i < repeats; i++) sum += times[i];
        qsort(times, (size_t)repeats, sizeof(double), ascending);
        printf("%zu %.3f %.3f %.3f\n", bytes, times[0], times[repeats / 2], sum / repeats);
    }
done:
    if (file) fclose(file);
    free(pixels);
    free(times);
    return status;
}
