// swift-tools-version:6.0
// The benchmark suite, a separate package so benchmark-only dependencies (async-http-client) never reach
// the library's build. Run from the repository root with `make bench` (or `make bench BENCH_ARGS=--quick`).
import PackageDescription

let package = Package(
    name: "WebImageBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "WebImage", path: ".."),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.25.0"),
    ],
    targets: [
        // Direct C calls into the same libraries, the "limit" our Swift layers are measured against.
        .target(
            name: "CBenchHarness",
            linkerSettings: [
                .linkedLibrary("jpeg"), .linkedLibrary("png16"), .linkedLibrary("gif"),
                .linkedLibrary("webp"), .linkedLibrary("webpdemux"), .linkedLibrary("webpmux"),
                .linkedLibrary("memcached"),
                .linkedLibrary("avif"), .linkedLibrary("jxl"), .linkedLibrary("heif"), .linkedLibrary("lcms2"),
            ]
        ),
        .executableTarget(
            name: "WebImageBench",
            dependencies: [
                "CBenchHarness",
                .product(name: "WebImage", package: "WebImage"),
                .product(name: "WebImageMemcached", package: "WebImage"),
                .product(name: "WebImageAVIF", package: "WebImage"),
                .product(name: "WebImageJXL", package: "WebImage"),
                .product(name: "WebImageHEIF", package: "WebImage"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
