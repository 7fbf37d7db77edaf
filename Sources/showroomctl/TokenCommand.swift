import ArgumentParser
import Foundation
import ShowroomAuth

/// `showroomctl token`: mints an AccessToken2 ("007...") RTC token, or with `--verify` decodes a
/// token and checks it as an edge would.
///
///     showroomctl token --app-id ID --app-cert CERT --channel room-1 --uid 42 --role publisher --expire 3600
///     showroomctl token --verify 007eJx... --app-id ID --app-cert CERT --channel room-1 --uid 42
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Mint an AccessToken2 (\"007...\") RTC token, or decode and verify one with --verify.",
        discussion: """
            Minting needs --app-id, --app-cert (or --app-cert-file), --channel, --role and --expire. \
            An empty --channel "" makes a wildcard token (any channel); --uid 0 (the default) makes \
            a token for any uid. Privileges last --privilege-expire seconds (default: as long as the token).

            --verify TOKEN prints the token's fields. With the certificate it also checks the \
            signature and verifies the token for --channel and --uid (default: the token's own) \
            at --now (default: the current time), printing the grant or the refusal's error code \
            and message; a signaling login token (RTM only, no --channel given) is verified as a \
            login for its user instead. The exit status is 1 when the token is refused.
            """)

    @Option(name: .customLong("app-id"), help: "The app id (32 hex digits).")
    var appID: String?

    @Option(name: .customLong("app-cert"), help: "The app certificate (32 hex digits). Visible to other local users in the process list; prefer --app-cert-file.")
    var appCertificate: String?

    @Option(name: .customLong("app-cert-file"), help: "A file holding the app certificate.")
    var appCertificateFile: String?

    @Option(help: "The channel name; \"\" for any channel (wildcard token).")
    var channel: String?

    @Option(help: "The uid; 0 for any uid. (Default when minting: 0; when verifying: the token's uid.)")
    var uid: UInt32?

    @Option(help: "publisher (join + publish audio, video, data) or subscriber (join only).")
    var role: String?

    @Option(help: "The token's lifetime in seconds.")
    var expire: UInt32?

    @Option(name: .customLong("privilege-expire"), help: "The privileges' lifetime in seconds (default: the token's --expire).")
    var privilegeExpire: UInt32?

    @Option(name: .customLong("issue-ts"), help: "Issue time, Unix seconds (default: now). For reproducible tokens.")
    var issueTs: UInt32?

    @Option(help: "Salt (default: random). For reproducible tokens.")
    var salt: UInt32?

    @Option(help: "Decode this token and, given the certificate, verify it.")
    var verify: String?

    @Option(help: "With --verify: the time to verify at, Unix seconds (default: now).")
    var now: UInt32?

    @Flag(help: "Print one JSON object.")
    var json = false

    func validate() throws {
        if appCertificate != nil && appCertificateFile != nil {
            throw ValidationError("give --app-cert or --app-cert-file, not both")
        }
        if verify != nil {
            for (given, flag) in [(role != nil, "--role"), (expire != nil, "--expire"), (privilegeExpire != nil, "--privilege-expire"),
                                  (issueTs != nil, "--issue-ts"), (salt != nil, "--salt")] where given {
                throw ValidationError("\(flag) is for minting; it has no meaning with --verify")
            }
            return
        }
        guard now == nil else { throw ValidationError("--now is for --verify") }
        guard appID != nil else { throw ValidationError("give --app-id to mint a token (or --verify TOKEN to check one)") }
        guard appCertificate != nil || appCertificateFile != nil else {
            throw ValidationError("give --app-cert or --app-cert-file to mint a token")
        }
        guard channel != nil else { throw ValidationError("give --channel (\"\" for a wildcard token valid in any channel)") }
        guard let role else { throw ValidationError("give --role publisher or --role subscriber") }
        guard Self.role(role) != nil else {
            throw ValidationError("--role must be publisher or subscriber, not '\(role)'")
        }
        guard let expire, expire > 0 else { throw ValidationError("give --expire SECONDS (more than 0)") }
    }

    func run() throws {
        if let verify {
            try runVerify(verify.trimmingCharacters(in: .whitespacesAndNewlines))
        } else {
            try runMint()
        }
    }

    // MARK: - Minting

    private func runMint() throws {
        let expire = self.expire!
        let issueTs = self.issueTs ?? UInt32(Date().timeIntervalSince1970)
        let token: String
        do {
            token = try RTCTokenBuilder.buildToken(
                appID: appID!, appCertificate: try certificate()!, channelName: channel!, uid: uid ?? 0,
                role: Self.role(role!)!, tokenExpire: expire, privilegeExpire: privilegeExpire ?? expire,
                issueTs: issueTs, salt: salt)
        } catch let error as TokenError {
            fail(error.description)
        }
        if json {
            try printJSON(["token": token, "expires_at": Int(try AccessToken2.parse(token).expiresAt)])
        } else {
            print(token)
        }
    }

    // MARK: - Verifying

    private func runVerify(_ text: String) throws {
        let token: AccessToken2
        do {
            token = try AccessToken2.parse(text)
        } catch {
            if json {
                try printJSON(["result": "rejected", "error": Self.json(error)])
            } else {
                print("rejected  \(error)")
            }
            throw ExitCode(1)
        }

        let certificate = try certificate()
        let at = now ?? UInt32(Date().timeIntervalSince1970)
        var verdict: Result<String, TokenError>?  // what was verified, or why it was refused
        var grant: TokenGrant?
        var loginExpiresAt: UInt32?
        if let certificate {
            let verifier = TokenVerifier(appID: appID ?? token.appID, appCertificate: certificate)
            let rtc = token.rtcServices.first
            do {
                if rtc == nil, let rtm = token.rtmServices.first, channel == nil {
                    let user = rtm.userID
                    loginExpiresAt = try verifier.verifyLogin(text, userID: user, now: at)
                    verdict = .success("login as user \"\(user)\" at \(at)")
                } else {
                    let channel = self.channel ?? rtc?.channelName ?? ""
                    let uid = self.uid ?? rtc.flatMap { UInt32($0.uid) } ?? 0
                    grant = try verifier.verify(text, channel: channel, uid: uid, now: at)
                    verdict = .success("channel \"\(channel)\" uid \(uid) at \(at)")
                }
            } catch {
                verdict = .failure(error)
            }
        }

        if json {
            var object: [String: Any] = ["token": Self.json(token)]
            switch verdict {
            case nil:
                object["result"] = "not_verified"
                object["signature_valid"] = NSNull()
            case .success:
                object["result"] = "accepted"
                object["signature_valid"] = true
                if let grant { object["grant"] = Self.json(grant) }
                if let loginExpiresAt { object["login_expires_at"] = Int(loginExpiresAt) }
            case .failure(let error):
                object["result"] = "rejected"
                object["signature_valid"] = certificate.map { token.verifySignature(appCertificate: $0) } ?? NSNull()
                object["error"] = Self.json(error)
            }
            try printJSON(object)
        } else {
            print(Self.table(token))
            switch verdict {
            case nil:
                print("signature not checked: give --app-cert or --app-cert-file to verify")
            case .success(let what):
                print("accepted  \(what)")
                if let grant { print(Self.table(grant)) }
                if let loginExpiresAt { print("login     until \(Self.time(loginExpiresAt))") }
            case .failure(let error):
                print("rejected  \(error)")
            }
        }
        if case .failure = verdict { throw ExitCode(1) }
    }

    // MARK: - Helpers

    private static func role(_ text: String) -> RTCRole? {
        switch text.lowercased() {
        case "publisher", "broadcaster", "host": return .publisher
        case "subscriber", "audience": return .subscriber
        default: return nil
        }
    }

    /// The certificate from --app-cert or --app-cert-file (trimmed), or nil if neither was given.
    private func certificate() throws -> String? {
        if let appCertificate { return appCertificate }
        guard let path = appCertificateFile else { return nil }
        do {
            return try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            fail("cannot read --app-cert-file \(path): \(error.localizedDescription)")
        }
    }

    private func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("showroomctl token: \(message)\n".utf8))
        Foundation.exit(1)
    }

    private func printJSON(_ object: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        print(String(decoding: data, as: UTF8.self))
    }

    private static func time(_ seconds: UInt32) -> String {
        let date = Date(timeIntervalSince1970: TimeInterval(seconds))
        return "\(seconds) (\(ISO8601DateFormatter().string(from: date)))"
    }

    private static func privilegeName(_ number: UInt16, rtc: Bool) -> String {
        if rtc, let privilege = RTCPrivilege(rawValue: number) { return privilege.description }
        if !rtc, let privilege = RTMPrivilege(rawValue: number) { return privilege.description }
        return "privilege \(number)"
    }

    private static func privilegeLines(_ privileges: [UInt16: UInt32], rtc: Bool, token: AccessToken2) -> [String] {
        privileges.keys.sorted().map { key in
            let expire = privileges[key]!
            let name = privilegeName(key, rtc: rtc).padding(toLength: 20, withPad: " ", startingAt: 0)
            return expire == 0
                ? "            \(name) 0 s (as long as the token)"
                : "            \(name) \(expire) s, until \(time(token.issueTs &+ expire))"
        }
    }

    private static func table(_ token: AccessToken2) -> String {
        var lines = [
            "app id    \(token.appID)",
            "issued    \(time(token.issueTs))",
            "expires   \(time(token.expiresAt)), \(token.expire) s after issue",
            "salt      \(token.salt)",
        ]
        for service in token.services {
            switch service {
            case .rtc(let rtc):
                let channel = rtc.isWildcardChannel ? "any channel" : "channel \"\(rtc.channelName)\""
                let uid = rtc.isWildcardUid ? "any uid" : "uid \"\(rtc.uid)\""
                lines.append("service   rtc, \(channel), \(uid)")
                lines += privilegeLines(rtc.privileges, rtc: true, token: token)
            case .rtm(let rtm):
                lines.append("service   rtm, user \"\(rtm.userID)\"")
                lines += privilegeLines(rtm.privileges, rtc: false, token: token)
            case .other(let type, let payload):
                lines.append("service   type \(type) (not read by Showroom), \(payload.count) bytes")
            }
        }
        return lines.joined(separator: "\n")
    }

    private static func table(_ grant: TokenGrant) -> String {
        var lines: [String] = []
        for privilege in RTCPrivilege.allCases {
            let name = privilege.description.padding(toLength: 20, withPad: " ", startingAt: 0)
            guard let expiry = grant.expiresAt(privilege) else {
                lines.append("grant     \(name) not granted")
                continue
            }
            let state = grant.allows(privilege, at: grant.verifiedAt) ? "until" : "expired at"
            lines.append("grant     \(name) \(state) \(time(expiry))")
        }
        lines.append("renew     before \(time(grant.willExpireAt)); \"token will expire\" at \(time(grant.warnAt))")
        return lines.joined(separator: "\n")
    }

    private static func json(_ error: TokenError) -> [String: Any] {
        ["code": error.code.rawValue, "name": error.code.name, "message": error.message]
    }

    private static func json(_ token: AccessToken2) -> [String: Any] {
        func privileges(_ map: [UInt16: UInt32], rtc: Bool) -> [String: Int] {
            Dictionary(uniqueKeysWithValues: map.map { (privilegeName($0.key, rtc: rtc), Int($0.value)) })
        }
        let services: [[String: Any]] = token.services.map { service in
            switch service {
            case .rtc(let rtc):
                return ["type": "rtc", "channel": rtc.channelName, "uid": rtc.uid, "privileges": privileges(rtc.privileges, rtc: true)]
            case .rtm(let rtm):
                return ["type": "rtm", "user_id": rtm.userID, "privileges": privileges(rtm.privileges, rtc: false)]
            case .other(let type, let payload):
                return ["type": Int(type), "bytes": payload.count]
            }
        }
        return [
            "app_id": token.appID, "issue_ts": Int(token.issueTs), "expire": Int(token.expire),
            "expires_at": Int(token.expiresAt), "salt": Int(token.salt), "services": services,
        ]
    }

    private static func json(_ grant: TokenGrant) -> [String: Any] {
        var privileges: [String: Int] = [:]
        for privilege in RTCPrivilege.allCases {
            if let expiry = grant.expiresAt(privilege) { privileges[privilege.description] = Int(expiry) }
        }
        return [
            "channel": grant.channel, "uid": Int(grant.uid), "wildcard_channel": grant.isWildcardChannel,
            "wildcard_uid": grant.isWildcardUid, "privileges_expire_at": privileges,
            "valid_privileges": grant.privileges(at: grant.verifiedAt).map(\.description).sorted(),
            "will_expire_at": Int(grant.willExpireAt), "warn_at": Int(grant.warnAt),
            "seconds_until_expiry": Int(grant.secondsUntilExpiry(now: grant.verifiedAt)),
        ]
    }
}
