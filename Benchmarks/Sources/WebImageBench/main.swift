import Foundation

// make bench [BENCH_ARGS="--quick --only codec,kvcache"]
var arguments = CommandLine.arguments.dropFirst()
// The crash child of the "KVCache at scale" suite: this binary re-executed as a writer that gets SIGKILLed.
if arguments.first == "--kvcache-scale-child", let folder = arguments.dropFirst().first {
    KVCacheScaleBench.runCrashChild(folder: folder)
}
var quick = false
var only: Set<String>?
while let argument = arguments.popFirst() {
    switch argument {
    case "--quick": quick = true
    case "--only": only = Set((arguments.popFirst() ?? "").split(separator: ",").map(String.init))
    default: print("usage: WebImageBench [--quick] [--only suite,…]"); exit(2)
    }
}

/// Every suite, in the order they run. Each layer adds its own.
let suites: [any BenchSuite.Type] = [CodecJPEGPNGBench.self, CodecGIFWebPBench.self, CodecModernBench.self, ProcessingBench.self, KVCacheBench.self, KVCacheScaleBench.self, FetcherBench.self, ManagerBench.self, ThumbnailBench.self, ColorBench.self, MemcachedBench.self, SmartCropBench.self, QualityBench.self, QualityFitBench.self]

let work = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-\(getpid())")
try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: work) }
let settings = BenchSettings(quick: quick, only: only, workDirectory: work)
let started = Clock.now()
for suite in suites where only?.contains(suite.name) ?? true {
    print("== \(suite.name)")
    do { try suite.run(settings) } catch { print("  suite \(suite.name) failed: \(error)") }
}
// Results go to the repository root (the parent of Benchmarks/).
let root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).deletingLastPathComponent()
try BenchReport.shared.write(to: root)
print(String(format: "Wrote bench-results.json and bench-results.md in %.0f s.", Clock.now() - started))
