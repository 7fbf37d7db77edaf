@testable import Coordinator
import Foundation
import NodeRuntime
import ShowroomWire
import XCTest

/// A coordinator's own settings live beside the shared ones in its configuration file; other
/// roles refuse them, and bad values are refused with the key named.
final class CoordinatorSettingsTests: XCTestCase {
    func file(_ json: String) throws -> ConfigurationFile {
        try ConfigurationFile(path: "coordinator.json", data: Data(json.utf8))
    }

    func testACoordinatorTakesItsOwnKeysAndTheSharedOnes() throws {
        let file = try file("""
            {"nodeID": "coordinator-7", "appID": "0123456789abcdef0123456789abcdef", "relayThreshold": 40,
             "webhookURLs": ["http://127.0.0.1:9/events"], "webhookSecret": "s", "roomExpirySeconds": 60, "userListKeepMs": 0}
            """)
        var shared = NodeConfiguration(role: .coordinator)
        try shared.apply(file, roleKeys: CoordinatorSettings.fileKeys)
        XCTAssertEqual(shared.nodeID, "coordinator-7")
        var settings = CoordinatorSettings()
        try settings.apply(file)
        try settings.validate()
        XCTAssertEqual(settings.relayThreshold, 40)
        XCTAssertEqual(settings.webhookURLs, ["http://127.0.0.1:9/events"])
        XCTAssertEqual(settings.roomExpirySeconds, 60)
        XCTAssertEqual(settings.userListKeepMs, 0, "0: the edges asked for every user list")
        XCTAssertEqual(settings.placementExpirySeconds, CoordinatorSettings().placementExpirySeconds, "not set: the default")
    }

    func testAnotherRoleRefusesACoordinatorsKeyAndTyposAreRefusedEverywhere() throws {
        var edge = NodeConfiguration(role: .edge)
        XCTAssertThrowsError(try edge.apply(try file(#"{"relayThreshold": 4}"#))) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .invalidArgument)
            XCTAssertTrue("\($0)".contains("unknown key 'relayThreshold'"), "\($0)")
        }
        var coordinator = NodeConfiguration(role: .coordinator)
        XCTAssertThrowsError(try coordinator.apply(try file(#"{"relayTreshold": 4}"#), roleKeys: CoordinatorSettings.fileKeys)) {
            XCTAssertTrue("\($0)".contains("unknown key 'relayTreshold'"), "\($0)")
        }
    }

    func testBadValuesAreRefusedWithTheKeyNamed() throws {
        var settings = CoordinatorSettings()
        XCTAssertThrowsError(try settings.apply(try file(#"{"roomExpirySeconds": "soon"}"#))) {
            XCTAssertTrue("\($0)".contains("'roomExpirySeconds' must be a Int"), "\($0)")
        }
        for json in [#"{"relayThreshold": -1}"#, #"{"roomExpirySeconds": 0}"#, #"{"placementExpirySeconds": 100000}"#,
                     #"{"eventsBind": "http://x"}"#, #"{"dataDirectory": ""}"#,
                     #"{"userListKeepMs": -1}"#, #"{"userListKeepMs": 60001}"#] {
            var bad = CoordinatorSettings()
            try bad.apply(try file(json))
            XCTAssertThrowsError(try bad.validate(), json) { XCTAssertEqual(($0 as? ShowroomError)?.code, .invalidArgument) }
        }
        XCTAssertThrowsError(try file("[1, 2]")) { XCTAssertTrue("\($0)".contains("must hold a JSON object"), "\($0)") }
        XCTAssertThrowsError(try file("{")) { XCTAssertTrue("\($0)".contains("is not valid JSON"), "\($0)") }
    }
}
