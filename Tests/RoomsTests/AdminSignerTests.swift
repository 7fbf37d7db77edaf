import ShowroomAuth
import ShowroomWire
import ShowroomTesting
import XCTest

final class AdminSignerTests: XCTestCase {
    let certificate = "5CFd2fd1755d40ecb72977518be15d3b"
    let now: Int64 = 1_700_000_000_000

    func testSignatureIsLowercaseHexHMACOfTheDocumentedMessage() {
        let signature = AdminSigner.sign(action: "close-room", target: "room1", uid: 0, issuedAtMs: now, appCertificate: certificate)
        XCTAssertEqual(signature.issuedAtMs, now)
        // Computed with another implementation (Python hmac): HMAC-SHA256(key: certificate, "close-room|room1|0|1700000000000").
        XCTAssertEqual(signature.signature, "d04f2ca24e8332e6e73fd5d9df9876a76009680eb84ca922251d756057c939b7")
        XCTAssertEqual(signature.signature.count, 64)
        XCTAssertEqual(signature.signature, signature.signature.lowercased())
    }

    func testVerifyAcceptsAFreshSignature() {
        let signature = AdminSigner.sign(action: "kick", target: "show", uid: 42, issuedAtMs: now, appCertificate: certificate)
        XCTAssertNoThrow(try AdminSigner.verify(signature, action: "kick", target: "show", uid: 42, nowMs: now, appCertificate: certificate))
        XCTAssertNoThrow(try AdminSigner.verify(
            signature, action: "kick", target: "show", uid: 42, nowMs: now + 5 * 60_000, appCertificate: certificate),
            "5 minutes is still accepted")
        XCTAssertNoThrow(try AdminSigner.verify(
            signature, action: "kick", target: "show", uid: 42, nowMs: now - 5 * 60_000, appCertificate: certificate),
            "a clock behind by 5 minutes too")
        var upper = signature
        upper.signature = signature.signature.uppercased()
        XCTAssertNoThrow(try AdminSigner.verify(upper, action: "kick", target: "show", uid: 42, nowMs: now, appCertificate: certificate))
    }

    func testVerifyRefusals() {
        let signature = AdminSigner.sign(action: "kick", target: "show", uid: 42, issuedAtMs: now, appCertificate: certificate)
        func refuse(
            _ signature: RoomAdminSignature, action: String = "kick", target: String = "show", uid: UInt32 = 42,
            nowMs: Int64? = nil, certificate: String? = nil, file: StaticString = #filePath, line: UInt = #line
        ) -> String {
            assertThrows(.adminUnauthorized, { () throws(ShowroomError) in
                try AdminSigner.verify(signature, action: action, target: target, uid: uid, nowMs: nowMs ?? now,
                                       appCertificate: certificate ?? self.certificate)
            }, file: file, line: line)?.message ?? ""
        }

        XCTAssertTrue(refuse(RoomAdminSignature()).contains("not signed"))
        var noTime = signature
        noTime.issuedAtMs = 0
        XCTAssertTrue(refuse(noTime).contains("not signed"))

        XCTAssertTrue(refuse(signature, certificate: "00000000000000000000000000000000").contains("does not match"), "wrong certificate")
        XCTAssertTrue(refuse(signature, target: "other").contains("does not match"), "tampered target")
        XCTAssertTrue(refuse(signature, uid: 43).contains("does not match"), "tampered uid")
        XCTAssertTrue(refuse(signature, action: "close-room").contains("does not match"), "another action")
        var retimed = signature
        retimed.issuedAtMs += 1
        XCTAssertTrue(refuse(retimed).contains("does not match"), "tampered issue time")
        var garbled = signature
        garbled.signature = "zz" + signature.signature.dropFirst(2)
        XCTAssertTrue(refuse(garbled).contains("does not match"), "not hex")
        var flipped = signature
        flipped.signature = String(signature.signature.dropLast()) + (signature.signature.last == "0" ? "1" : "0")
        XCTAssertTrue(refuse(flipped).contains("does not match"), "one digit changed")

        XCTAssertTrue(refuse(signature, nowMs: now + 5 * 60_000 + 1).contains("ago"), "stale")
        XCTAssertTrue(refuse(signature, nowMs: now - 5 * 60_000 - 1).contains("ahead"), "from the future")
        XCTAssertTrue(refuse(signature, certificate: "").contains("no app certificate"))
    }
}
