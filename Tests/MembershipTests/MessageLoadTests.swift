import Foundation
import XCTest

@testable import Membership

/// Gossip load per member must not grow with the cluster: probes are one per member per period
/// whatever n is, dissemination only runs while there is news, and push-pull slows down in
/// proportion to n so its bytes per member per second stay flat.
final class MessageLoadTests: XCTestCase {
    private struct Load {
        let messagesPerMemberPerSecond: Double
        let bytesPerMemberPerSecond: Double
    }

    /// Steady-state load of a converged cluster of `count` members over `window` of fake time,
    /// in encoded gossip bytes (the envelope adds a few bytes per message).
    private func steadyLoad(members count: Int, window: Duration = .seconds(30)) throws -> Load {
        var (network, converged) = SimulatedNetwork.converged(count: count, seed: 99)
        XCTAssertNotNil(converged, "\(count) members did not converge")
        network.run(for: .seconds(10))  // let the join news finish its retransmissions
        network.resetCounters()
        network.measureBytes = true
        network.run(for: window)
        XCTAssertTrue(network.isConverged)
        let seconds = Double(window.components.seconds)
        let messages = Double(network.nodes.map(\.messagesSent).reduce(0, +))
        let bytes = Double(network.nodes.map(\.bytesSent).reduce(0, +))
        return Load(
            messagesPerMemberPerSecond: messages / Double(count) / seconds,
            bytesPerMemberPerSecond: bytes / Double(count) / seconds)
    }

    func testLoadPerMemberStaysBoundedFromTenToFiftyMembers() throws {
        let ten = try steadyLoad(members: 10)
        let fifty = try steadyLoad(members: 50)
        func fmt(_ x: Double) -> String { String(Int(x.rounded())) }
        let probePeriod = Double(MembershipSettings.lan.probeInterval.components.attoseconds) / 1e18
            + Double(MembershipSettings.lan.probeInterval.components.seconds)
        print("membership simulation: steady gossip load per member: "
              + "10 members \(String(format: "%.1f", ten.messagesPerMemberPerSecond)) msg/s, \(fmt(ten.bytesPerMemberPerSecond)) B/s "
              + "(\(String(format: "%.1f", ten.messagesPerMemberPerSecond * probePeriod)) msg per probe period); "
              + "50 members \(String(format: "%.1f", fifty.messagesPerMemberPerSecond)) msg/s, \(fmt(fifty.bytesPerMemberPerSecond)) B/s "
              + "(\(String(format: "%.1f", fifty.messagesPerMemberPerSecond * probePeriod)) msg per probe period); "
              + "ratio messages \(String(format: "%.2f", fifty.messagesPerMemberPerSecond / ten.messagesPerMemberPerSecond)), "
              + "bytes \(String(format: "%.2f", fifty.bytesPerMemberPerSecond / ten.bytesPerMemberPerSecond))")
        XCTAssertLessThanOrEqual(fifty.messagesPerMemberPerSecond, 2 * ten.messagesPerMemberPerSecond)
        XCTAssertLessThanOrEqual(fifty.bytesPerMemberPerSecond, 2 * ten.bytesPerMemberPerSecond)
        // About a ping and an ack each way per probe period, plus anti-entropy.
        XCTAssertLessThan(fifty.messagesPerMemberPerSecond, 12)
    }
}
