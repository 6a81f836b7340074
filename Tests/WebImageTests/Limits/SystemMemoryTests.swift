import Foundation
@testable import WebImage
import XCTest

/// The cgroup parsing of `SystemMemory`, on fake `/proc` and `/sys` trees.
final class SystemMemoryTests: XCTestCase {
    private var root: URL!

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("sysmem-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try FileManager.default.removeItem(at: root)
    }

    private func write(_ path: String, _ text: String) throws {
        let url = root.appendingPathComponent(String(path.dropFirst()))
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    private func memory(physical: Int64 = 16 << 30) -> SystemMemory {
        SystemMemory(root: root.path, physicalBytes: physical)
    }

    func testNoCgroupFilesMeansPhysicalMemory() {
        XCTAssertNil(memory().cgroupLimit)
        XCTAssertEqual(memory().totalBytes, 16 << 30)
    }

    func testCgroupV2LimitAtTheMountRoot() throws {
        try write("/sys/fs/cgroup/memory.max", "536870912\n")
        XCTAssertEqual(memory().cgroupLimit, 512 << 20)
        XCTAssertEqual(memory().totalBytes, 512 << 20)
    }

    func testCgroupV2MaxMeansNoLimit() throws {
        try write("/sys/fs/cgroup/memory.max", "max\n")
        XCTAssertNil(memory().cgroupLimit)
    }

    func testCgroupV2NestedGroupFromProcSelfCgroupAndTheSmallestAncestorWins() throws {
        try write("/proc/self/cgroup", "0::/system.slice/app.service\n")
        try write("/sys/fs/cgroup/memory.max", "max\n")
        try write("/sys/fs/cgroup/system.slice/memory.max", "2147483648\n")
        try write("/sys/fs/cgroup/system.slice/app.service/memory.max", "max\n")
        XCTAssertEqual(memory().cgroupLimit, 2 << 30)
        try write("/sys/fs/cgroup/system.slice/app.service/memory.max", "1073741824\n")
        XCTAssertEqual(memory().cgroupLimit, 1 << 30)
    }

    func testCgroupV1LimitAndItsNoLimitSentinel() throws {
        try write("/proc/self/cgroup", "9:name=systemd:/\n4:cpu,memory:/docker/abc\n0::/\n")
        try write("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n")
        XCTAssertNil(memory().cgroupLimit, "v1's 'unlimited' is a number near 2^63")
        try write("/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", "268435456\n")
        XCTAssertEqual(memory().cgroupLimit, 256 << 20)
    }

    func testALimitAbovePhysicalMemoryLeavesPhysical() throws {
        try write("/sys/fs/cgroup/memory.max", "\(Int64(64) << 30)\n")
        XCTAssertEqual(memory(physical: 8 << 30).totalBytes, 8 << 30)
    }

    func testAvailableIsCappedByWhatTheCgroupLeaves() throws {
        try write("/proc/meminfo", "MemTotal:       16000000 kB\nMemAvailable:    8000000 kB\n")
        try write("/sys/fs/cgroup/memory.max", "1073741824\n")
        try write("/sys/fs/cgroup/memory.current", "805306368\n")
        XCTAssertEqual(memory().availableBytes, 256 << 20)
    }

    func testDefaultsDerivedFromTheProcessMemory() {
        // 24 GB machine: 15 % is 3.6 GB, capped at 768 MB; entry 10 % of that.
        let big = ImageCacheLimits(processMemory: 24 << 30)
        XCTAssertEqual(big.memoryCostLimit, 768 << 20)
        XCTAssertEqual(big.memoryEntryCostLimit, Int(Double(768 << 20) * 0.1))
        // A 1 GiB container: 15 %.
        let small = ImageCacheLimits(processMemory: 1 << 30)
        XCTAssertEqual(small.memoryCostLimit, Int(Double(1 << 30) * 0.15))
        XCTAssertEqual(small.diskCostLimit, 1 << 30)
        XCTAssertEqual(small.diskAgeLimit, 7 * 24 * 3600)
        XCTAssertEqual(small.diskFreeSpaceLimit, 1 << 30)
        XCTAssertEqual(DecodeBudget.defaultCapacity(forProcessMemory: 24 << 30), 1 << 30)
        XCTAssertEqual(DecodeBudget.defaultCapacity(forProcessMemory: 1 << 30), Int(Double(1 << 30) * 0.2))
        XCTAssertEqual(DecodeBudget.defaultCapacity(forProcessMemory: 100 << 20), 64 << 20)
    }
}
