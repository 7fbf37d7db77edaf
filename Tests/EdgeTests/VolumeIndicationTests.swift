import Edge
import ShowroomWire
import XCTest

/// The loudest speakers, per listener and interval, from the levels in the audio frame headers.
final class VolumeIndicationTests: XCTestCase {
    /// Four broadcasters (uids 1–4) and one audience member (uid 9) in "room".
    private func room() -> TestEdge {
        var edge = TestEdge()
        for session in [host, guest, viewer1, viewer2, viewer3] { edge.open(session) }
        edge.join(host, "room", uid: 1, as: .broadcaster)
        edge.join(guest, "room", uid: 2, as: .broadcaster)
        edge.join(viewer1, "room", uid: 3, as: .broadcaster)
        edge.join(viewer2, "room", uid: 4, as: .broadcaster)
        edge.join(viewer3, "room", uid: 9, as: .audience)
        return edge
    }

    /// Runs `duration` of 20 ms audio frames at the given levels (uid → level), ticking after each.
    private func speak(_ edge: inout TestEdge, _ levels: [UInt32: UInt8], for duration: Duration) -> [(at: Duration, directive: EdgeDirective)] {
        let sessions: [UInt32: SessionID] = [1: host, 2: guest, 3: viewer1, 4: viewer2]
        var out: [(at: Duration, directive: EdgeDirective)] = []
        let end = edge.now + duration
        while edge.now < end {
            edge.now += .milliseconds(20)
            for (uid, level) in levels.sorted(by: { $0.key < $1.key }) {
                edge.publish(sessions[uid]!, "room", uid: uid, .audio, level: level)
            }
            edge.heartbeat(viewer3)
            out += edge.run(edge.plane.tick(now: edge.now)).map { (at: edge.now, directive: $0) }
        }
        return out
    }

    private func reports(_ out: [(at: Duration, directive: EdgeDirective)], to session: SessionID) -> [(at: Duration, speakers: [SpeakerVolume])] {
        out.compactMap {
            if case .send(.volumeIndication(_, let speakers), let to) = $0.directive, to == session { ($0.at, speakers) } else { nil }
        }
    }

    func testReportsTheLoudestSpeakersToListenersThatEnabledItAtTheirInterval() {
        var edge = room()
        let enable = edge.run(edge.plane.enableVolumeIndication(
            viewer3, requestID: 1, config: VolumeIndicationConfig(interval: .milliseconds(300), smoothing: 0, reportVAD: true), now: edge.now))
        XCTAssertEqual(enable.replies.first?.body, .done)
        let out = speak(&edge, [1: 10, 2: 80, 3: 50, 4: 30], for: .milliseconds(1000))
        let received = reports(out, to: viewer3)
        XCTAssertEqual(received.map(\.at), [.milliseconds(300), .milliseconds(600), .milliseconds(900)])
        for report in received {
            XCTAssertEqual(report.speakers, [
                SpeakerVolume(uid: 2, volume: 80, voiceActive: true),
                SpeakerVolume(uid: 3, volume: 50, voiceActive: true),
                SpeakerVolume(uid: 4, volume: 30, voiceActive: true),
            ], "the three loudest, loudest first; uid 1 is fourth")
        }
        XCTAssertEqual(reports(out, to: host).count, 0, "not enabled there")
    }

    func testSpeakersAreRankedByTheirPeakInTheIntervalAndFadeWhenSilent() {
        var edge = room()
        _ = edge.plane.enableVolumeIndication(viewer3, config: VolumeIndicationConfig(interval: .milliseconds(200), smoothing: 0), now: edge.now)
        var out = speak(&edge, [1: 20, 2: 60], for: .milliseconds(200))
        XCTAssertEqual(reports(out, to: viewer3).last?.speakers, [
            SpeakerVolume(uid: 2, volume: 60), SpeakerVolume(uid: 1, volume: 20),
        ], "no voice activity unless asked for")
        // Uid 2 stops talking (no frames), uid 1 keeps going: only uid 1 is reported.
        out = speak(&edge, [1: 20], for: .milliseconds(200))
        XCTAssertEqual(reports(out, to: viewer3).last?.speakers, [SpeakerVolume(uid: 1, volume: 20)])
    }

    func testSmoothingBlendsEachReportWithThePreviousOnes() {
        var edge = room()
        _ = edge.plane.enableVolumeIndication(viewer3, config: VolumeIndicationConfig(interval: .milliseconds(100), smoothing: 3), now: edge.now)
        let out = speak(&edge, [2: 80], for: .milliseconds(300))
        // (previous × 3 + 80) / 4: 20, 35, 46.25.
        XCTAssertEqual(reports(out, to: viewer3).map { $0.speakers.first?.volume }, [20, 35, 46])
    }

    func testIntervalBelowTheMinimumIsRefusedAndNilDisables() {
        var edge = room()
        let tooFast = edge.plane.enableVolumeIndication(viewer3, requestID: 1, config: VolumeIndicationConfig(interval: .milliseconds(50)), now: edge.now)
        XCTAssertEqual(tooFast.failure?.code, .invalidArgument)
        let badSmoothing = edge.plane.enableVolumeIndication(viewer3, requestID: 2, config: VolumeIndicationConfig(interval: .milliseconds(100), smoothing: 11), now: edge.now)
        XCTAssertEqual(badSmoothing.failure?.code, .invalidArgument)
        _ = edge.plane.enableVolumeIndication(viewer3, config: VolumeIndicationConfig(interval: .milliseconds(100)), now: edge.now)
        XCTAssertEqual(reports(speak(&edge, [1: 50], for: .milliseconds(200)), to: viewer3).count, 2)
        _ = edge.plane.enableVolumeIndication(viewer3, config: nil, now: edge.now)
        XCTAssertEqual(reports(speak(&edge, [1: 50], for: .milliseconds(200)), to: viewer3).count, 0)
    }
}
