import Foundation
import ShowroomWire

/// A process's JSON configuration file, read once: the settings every server shares
/// (``NodeConfiguration``) and those of the process's role (a coordinator's database and webhooks
/// …), each taken by the part that owns them. A key neither knows is refused, so a typo is never
/// ignored.
public struct ConfigurationFile: @unchecked Sendable {  // the parsed JSON is never changed
    /// Where the file is.
    public let path: String
    private let object: [String: Any]

    /// Reads and parses the file at `path`.
    /// - Throws: ``ShowroomError`` (`invalidArgument`) naming the file and what is wrong with it.
    public init(path: String) throws(ShowroomError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .invalidArgument("cannot read configuration file \(path): \(error.localizedDescription)")
        }
        try self.init(path: path, data: data)
    }

    /// Parses `data` as the file at `path`.
    public init(path: String, data: Data) throws(ShowroomError) {
        self.path = path
        do {
            guard let parsed = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw ShowroomError.invalidArgument("configuration file \(path) must hold a JSON object")
            }
            object = parsed
        } catch let error as ShowroomError {
            throw error
        } catch {
            throw .invalidArgument("configuration file \(path) is not valid JSON: \(error.localizedDescription)")
        }
    }

    /// Refuses a key not in `known`.
    public func check(known: Set<String>) throws(ShowroomError) {
        if let unknown = object.keys.filter({ !known.contains($0) }).sorted().first {
            throw .invalidArgument(
                "configuration file \(path): unknown key '\(unknown)'; known keys: \(known.sorted().joined(separator: ", "))")
        }
    }

    /// The value of `key`, if the file sets it.
    /// - Throws: `invalidArgument` when it is set to a value of another type.
    public func value<T>(_ key: String, as type: T.Type) throws(ShowroomError) -> T? {
        guard let raw = object[key] else { return nil }
        guard let typed = raw as? T else {
            throw .invalidArgument("configuration file \(path): '\(key)' must be a \(T.self), not \(raw)")
        }
        return typed
    }
}
