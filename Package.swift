// swift-tools-version:6.1
//
// WebImage — image loading and caching for Swift on Linux.
//
// Layers (lower never imports higher; ImageCodec, KVCache and Fetcher never import each other):
//   C system libraries (CWebImageJPEG, …PNG, …GIF, …WebP, …LCMS (Little CMS 2, colour), …Curl, …SQLite)
//   C shims (CWebImageCodecShims: every setjmp/longjmp; CWebImageCurlShims: every variadic curl call)
//   ImageCodec · KVCache · Fetcher
//   WebImage (the pipeline, and the umbrella re-exporting the three modules)
//   webimage (the command-line tool)
//   WebImageServerCore → WebImageServerHummingbird → webimage-server (the image service; only these build
//   Hummingbird, swift-service-lifecycle, swift-metrics, swift-prometheus and swift-crypto)
//   WebImageServerCore links the codec modules WebImageAVIF and WebImageJXL, and WebImageHEIF only under the
//   `HEIF` trait (default on): `--traits CommandLine,Service` builds a server without libheif and its libx265.
import PackageDescription

/// A system C library found through pkg-config, with the Debian package that provides it.
func systemLibrary(_ name: String, pkgConfig: String?, apt: String) -> Target {
    .systemLibrary(name: name, pkgConfig: pkgConfig, providers: [.apt([apt])])
}

let swiftSettings: [SwiftSetting] = [
    // Debug-only invariant checks (swift-collections' `_checkInvariants` idea).
    .define("WEBIMAGE_INVARIANTS", .when(configuration: .debug)),
]

let package = Package(
    name: "WebImage",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "WebImage", targets: ["WebImage"]),
        .executable(name: "webimage", targets: ["webimage"]),
        // A shared cache tier on a memcached pool (libmemcached); optional, so `WebImage` needs no libmemcached.
        .library(name: "WebImageMemcached", targets: ["WebImageMemcached"]),
        // Optional codec modules (each needs its Debian -dev package); they register in ImageCodecRegistry.
        .library(name: "WebImageAVIF", targets: ["WebImageAVIF"]),
        .library(name: "WebImageJXL", targets: ["WebImageJXL"]),
        // Debian's libheif1 links libx265 (GPL-2+): a separate product, so nothing else links it by accident.
        .library(name: "WebImageHEIF", targets: ["WebImageHEIF"]),
        // The image service: a framework-independent core, its Hummingbird 2 adapter, and the server.
        .library(name: "WebImageServerCore", targets: ["WebImageServerCore"]),
        .library(name: "WebImageServerHummingbird", targets: ["WebImageServerHummingbird"]),
        .executable(name: "webimage-server", targets: ["webimage-server"]),
    ],
    // What a client resolves: a package depending on this one with `traits: []` resolves swift-log only (the
    // external packages below are used under a trait, and test targets' dependencies are never resolved for a
    // client). The default traits build everything here: `make demo`, `make test` and CI need no flag.
    traits: [
        .trait(name: "CommandLine", description: "The webimage command-line tool (swift-argument-parser, swift-nio)."),
        .trait(name: "Service", description: "webimage-server and its libraries (Hummingbird 2, swift-service-lifecycle, "
               + "swift-metrics, swift-prometheus, swift-crypto)."),
        .trait(name: "HEIF", description: "webimage-server reads HEIC/HEIF sources through WebImageHEIF (libheif, which links "
               + "libx265, GPL-2+). Without it (`swift build --traits CommandLine,Service`) the server links no libheif "
               + "and answers 415 to HEIC."),
        .default(enabledTraits: ["CommandLine", "Service", "HEIF"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        // `swift package generate-documentation --target WebImage` (a plugin only; nothing is linked).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
        // The image service only (WebImageServerCore, WebImageServerHummingbird, webimage-server).
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
    ],
    targets: [
        // MARK: System libraries (Debian -dev packages)
        systemLibrary("CWebImageJPEG", pkgConfig: "libjpeg", apt: "libjpeg-dev"),
        systemLibrary("CWebImagePNG", pkgConfig: "libpng", apt: "libpng-dev"),
        systemLibrary("CWebImageGIF", pkgConfig: "libgif", apt: "libgif-dev"),
        systemLibrary("CWebImageWebP", pkgConfig: "libwebpdemux", apt: "libwebp-dev"),
        systemLibrary("CWebImageCurl", pkgConfig: "libcurl", apt: "libcurl4-openssl-dev"),
        systemLibrary("CWebImageSQLite", pkgConfig: "sqlite3", apt: "libsqlite3-dev"),
        systemLibrary("CWebImageZlib", pkgConfig: "zlib", apt: "zlib1g-dev"),
        // Little CMS 2 (MIT) for colour management; never its GPL fast-float plug-in (liblcms2-plugins).
        systemLibrary("CWebImageLCMS", pkgConfig: "lcms2", apt: "liblcms2-dev"),
        // Only for the optional WebImageMemcached product.
        systemLibrary("CWebImageMemcached", pkgConfig: "libmemcached", apt: "libmemcached-dev"),
        // Only for the optional codec modules.
        // No pkg-config for these two: their .pc files carry only a -D (`-DAVIF_DLL`, `-DHWY_SHARED_DEFINE`,
        // Windows DLL markers) that SwiftPM prints as "prohibited flag(s)" on every build of every client, even
        // one that never uses these modules. The headers are in /usr/include; the module maps link the libraries.
        systemLibrary("CWebImageAVIF", pkgConfig: nil, apt: "libavif-dev"),
        systemLibrary("CWebImageJXL", pkgConfig: nil, apt: "libjxl-dev"),
        systemLibrary("CWebImageHEIF", pkgConfig: "libheif", apt: "libheif-dev"),

        // MARK: Locks ThreadSanitizer can see (Synchronization.Mutex uses futexes TSan does not intercept)
        .target(name: "CWebImageSync"),
        .target(name: "WebImageSync", dependencies: ["CWebImageSync"]),

        // MARK: C shims
        .target(name: "CWebImageCodecShims", dependencies: ["CWebImageJPEG", "CWebImagePNG"]),
        .target(name: "CWebImageCurlShims", dependencies: ["CWebImageCurl"]),
        .target(name: "CWebImageMemcachedShims", dependencies: ["CWebImageMemcached"]),

        // MARK: Swift modules
        .target(
            name: "ImageCodec",
            dependencies: ["WebImageSync", "CWebImageCodecShims", "CWebImageJPEG", "CWebImagePNG", "CWebImageGIF", "CWebImageWebP",
                           "CWebImageLCMS", "CWebImageZlib"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KVCache",
            dependencies: ["WebImageSync", "CWebImageSQLite", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Fetcher",
            dependencies: ["WebImageSync", "CWebImageCurlShims", "CWebImageCurl", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "WebImage",
            dependencies: ["WebImageSync", "ImageCodec", "KVCache", "Fetcher", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "WebImageMemcached",
            dependencies: ["WebImageSync", "KVCache", "CWebImageMemcachedShims", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        // MARK: Optional codec modules (their own products: the WebImage product does not link them)
        .target(name: "WebImageAVIF", dependencies: ["ImageCodec", "WebImageSync", "CWebImageAVIF", "CWebImageCodecShims"],
                swiftSettings: swiftSettings),
        .target(name: "WebImageJXL", dependencies: ["ImageCodec", "CWebImageJXL"], swiftSettings: swiftSettings),
        .target(name: "WebImageHEIF", dependencies: ["ImageCodec", "CWebImageHEIF"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "webimage",
            dependencies: [
                "WebImage",
                "WebImageMemcached",
                "WebImageAVIF",
                "WebImageJXL",
                "WebImageHEIF",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["CommandLine"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["CommandLine"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["CommandLine"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["CommandLine"])),
            ]
        ),

        // MARK: The image service
        .target(
            name: "WebImageServerCore",
            dependencies: [
                "WebImage", "WebImageSync", "ImageCodec", "KVCache", "Fetcher", "WebImageAVIF", "WebImageJXL",
                .target(name: "WebImageHEIF", condition: .when(traits: ["HEIF"])),
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["Service"])),
                .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Service"])),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "WebImageServerHummingbird",
            dependencies: [
                "WebImageServerCore", "WebImageSync",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Service"])),
                .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: ["Service"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Service"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Service"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["Service"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Service"])),
                .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Service"])),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: ["Service"])),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "webimage-server",
            dependencies: [
                "WebImageServerHummingbird", "WebImageServerCore", "WebImageMemcached", "Fetcher", "ImageCodec",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["Service"])),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: Tests
        .target(
            name: "TestSupport",
            dependencies: [
                "WebImageSync",
                "ImageCodec",
                "CWebImageZlib",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/TestSupport"
        ),
        .testTarget(name: "ImageCodecTests", dependencies: ["ImageCodec", "CWebImageCodecShims", "WebImageSync", "TestSupport"]),
        .testTarget(name: "KVCacheTests", dependencies: ["KVCache", "WebImageSync", "TestSupport"]),
        .testTarget(name: "FetcherTests", dependencies: ["Fetcher", "WebImageSync", "CWebImageCurlShims", "CWebImageCurl", "TestSupport"]),
        // The randomized pipeline model, shared by WebImageTests and (under ThreadSanitizer) StressTests.
        .target(name: "PipelineModel", dependencies: ["WebImage", "WebImageSync", "TestSupport"], path: "Tests/PipelineModel"),
        .testTarget(name: "WebImageTests", dependencies: ["WebImage", "WebImageMemcached", "WebImageSync", "TestSupport", "PipelineModel",
                                                          "WebImageAVIF", "WebImageJXL", "WebImageHEIF"]),
        // Real memcached processes on loopback ports (the `memcached` package, installed by `make test-deps`).
        .testTarget(name: "WebImageMemcachedTests", dependencies: ["WebImageMemcached", "WebImage", "WebImageSync", "TestSupport"]),
        .testTarget(name: "WebImageAVIFTests", dependencies: ["WebImageAVIF", "CWebImageAVIF", "ImageCodec", "TestSupport"]),
        .testTarget(name: "WebImageJXLTests", dependencies: ["WebImageJXL", "CWebImageJXL", "ImageCodec", "TestSupport"]),
        .testTarget(name: "WebImageHEIFTests", dependencies: ["WebImageHEIF", "ImageCodec", "TestSupport"]),
        .testTarget(name: "WebImageServerTests",
                    dependencies: ["WebImageServerCore", "WebImageServerHummingbird", "WebImage", "WebImageSync", "ImageCodec",
                                   "WebImageAVIF", "WebImageJXL",
                                   "WebImageMemcached",
                                   .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                                   "Fetcher", "TestSupport"]),
        // Many threads, random cancels: run under ThreadSanitizer by `make test`.
        .testTarget(name: "StressTests", dependencies: ["WebImage", "WebImageMemcached", "WebImageSync", "TestSupport", "PipelineModel"]),
    ],
    swiftLanguageModes: [.v6]
)
