import Edge
@testable import ShowroomKit  // the options a join sends
import XCTest

final class ChannelMediaOptionsTests: XCTestCase {
    func testBroadcasterDefaultsPublishEverything() {
        let options = ChannelMediaOptions.broadcaster
        XCTAssertEqual(options.joinRole, .broadcaster)
        XCTAssertEqual(options.joinOptions, MediaOptions(publishAudio: true, publishVideo: true, publishData: true))
    }

    func testAudienceDefaultsPublishNothing() {
        XCTAssertEqual(ChannelMediaOptions().joinRole, .audience)
        XCTAssertEqual(ChannelMediaOptions.audience.joinOptions, MediaOptions())
    }

    func testExplicitFieldsOverrideTheRoleDefaults() {
        let options = ChannelMediaOptions(role: .broadcaster, publishVideo: false, autoSubscribeAudio: false)
        XCTAssertEqual(options.joinOptions, MediaOptions(
            publishAudio: true, publishVideo: false, publishData: true, autoSubscribeAudio: false, autoSubscribeVideo: true))
    }

    func testUpdateCarriesOnlyTheFieldsSet() {
        // Applied to current options, unset fields stay.
        let current = MediaOptions(publishAudio: false, publishVideo: true, autoSubscribeVideo: false)
        XCTAssertEqual(current.applying(ChannelMediaOptions(publishAudio: true).edgeUpdate),
                       MediaOptions(publishAudio: true, publishVideo: true, autoSubscribeVideo: false))
    }

    func testMediaClockIsMonotonic() {
        let first = MediaClock.nowMicroseconds()
        let second = MediaClock.nowMicroseconds()
        XCTAssertLessThanOrEqual(first, second)
    }
}
