// swift-tools-version:6.0
// The reliability suite: libFuzzer targets and the soak run, a separate package (like Benchmarks/) so the
// fuzzer and sanitizer builds never reach the library's own build. Run from the repository root with
// `make fuzz` and `make soak` (see the Makefile for the exact build lines).
//
// Each `Fuzz…` target is one libFuzzer binary: a single file exporting `LLVMFuzzerTestOneInput` and no
// `main` (libFuzzer brings its own), built by `make fuzz` (see FUZZ_BUILD in the Makefile for the flags and
// why each is needed), one product at a time.
// To add a target: add an executable target here whose one
// file is not named main.swift and has no top-level code, and add its name to FUZZ_TARGETS in the Makefile.
import PackageDescription

let package = Package(
    name: "WebImageReliability",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "WebImage", path: ".."),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
    ],
    targets: [
        // Sniffing + decoding of every format, every frame of animations, thumbnails, small limits.
        .executableTarget(
            name: "FuzzDecode",
            dependencies: [.product(name: "WebImage", package: "WebImage")]
        ),
        // IncrementalDecoder fed in chunks of a size the input picks; once final it must equal a one-shot decode.
        .executableTarget(
            name: "FuzzIncremental",
            dependencies: [.product(name: "WebImage", package: "WebImage")]
        ),
        // The optional codec modules, each on its own library (libavif, libjxl one-shot and incremental, libheif).
        .executableTarget(
            name: "FuzzAVIF",
            dependencies: [.product(name: "WebImage", package: "WebImage"), .product(name: "WebImageAVIF", package: "WebImage")]
        ),
        .executableTarget(
            name: "FuzzJXL",
            dependencies: [.product(name: "WebImage", package: "WebImage"), .product(name: "WebImageJXL", package: "WebImage")]
        ),
        .executableTarget(
            name: "FuzzHEIF",
            dependencies: [.product(name: "WebImage", package: "WebImage"), .product(name: "WebImageHEIF", package: "WebImage")]
        ),
        // ICC profiles, random and mutated, through the colour stage as a source (JPEG, PNG, WebP) and a target.
        .executableTarget(
            name: "FuzzColorProfile",
            dependencies: [.product(name: "WebImage", package: "WebImage")]
        ),
        // Every HTTP header grammar (dates, delta-seconds, Cache-Control, ETag, Content-Type, Retry-After) and
        // HTTPCachePolicy over whole responses.
        .executableTarget(
            name: "FuzzHTTPHeaders",
            dependencies: [.product(name: "WebImage", package: "WebImage")]
        ),
        // KVStorage / DiskCache opened on a garbage manifest, WAL or data file.
        .executableTarget(
            name: "FuzzKVStorage",
            dependencies: [
                .product(name: "WebImage", package: "WebImage"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // 10 minutes of mixed requests with cancellations against a misbehaving loopback server.
        .executableTarget(
            name: "Soak",
            dependencies: [
                .product(name: "WebImage", package: "WebImage"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
