import ShowroomWire
import XCTest

final class IPAddressTests: XCTestCase {
    func testEachAddressHasOneSpelling() {
        XCTAssertEqual(IPAddress.canonical("127.0.0.1"), "127.0.0.1")
        XCTAssertEqual(IPAddress.canonical("::ffff:127.0.0.1"), "127.0.0.1", "IPv4-mapped IPv6")
        XCTAssertEqual(IPAddress.canonical("::FFFF:7f00:1"), "127.0.0.1")
        XCTAssertEqual(IPAddress.canonical("2001:DB8:0:0:0:0:0:1"), "2001:db8::1")
        XCTAssertEqual(IPAddress.canonical("::1"), "::1")
    }

    func testAnythingButAnAddressLiteralIsRefused() {
        for hostile in ["", "localhost", "10.0.0.1:80", "10.0.0.0/8", "fe80::1%eth0", "1.2.3", "1.2.3.4.5", "256.1.1.1",
                        " 10.0.0.1", "10.0.0.1\n", "[::1]", String(repeating: "1", count: 46), String(repeating: ":", count: 100_000)] {
            XCTAssertNil(IPAddress.canonical(hostile), hostile)
        }
    }
}
