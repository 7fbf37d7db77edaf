import ShowroomKit
import ShowroomWire
import XCTest

/// The SDK refuses a channel name the edges would refuse, before asking anybody.
final class ChannelNameTests: XCTestCase {
    func testAnInvalidChannelNameFailsAtOnceWithTheEdgesCode() async throws {
        // No cluster at this seed: a valid name would go on to placement and fail there instead.
        let engine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(["tcp://127.0.0.1:9"])))
        for name in ["", "with\0nul", String(repeating: "a", count: 65), "naïve", String(repeating: "x", count: 1 << 20)] {
            do {
                try await engine.joinChannel(token: "007x", channel: name, uid: 1)
                XCTFail("joined \(name.prefix(20).debugDescription)")
            } catch {
                XCTAssertEqual(error.code, .invalidArgument, "\(name.prefix(20).debugDescription): \(error)")
            }
        }
        await engine.shutdown()
    }
}
