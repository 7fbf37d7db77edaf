import Foundation

/// What the server reads from its own OpenAPI document at start: each operation's query
/// parameters (a query parameter the operation does not take is refused, not ignored: a typo must
/// not silently change what a request means) and each path's methods (a method a path does not
/// take gets 405 with `Allow`, a path no operation has 404).
struct APIDocument: Sendable {
    /// Query parameter names by operation id.
    let queryNames: [String: Set<String>]
    /// Path templates, split at `/` (`{name}` matches one segment), with their methods.
    let paths: [(segments: [String], methods: Set<String>)]

    /// The document this server serves.
    static let served = APIDocument(json: openAPIDocumentJSON)

    init(json: String) {
        var queryNames: [String: Set<String>] = [:]
        var paths: [(segments: [String], methods: Set<String>)] = []
        let document = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] ?? [:]
        let methods = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]
        let components = (document["components"] as? [String: Any])?["parameters"] as? [String: Any] ?? [:]
        // A parameter given as `$ref: '#/components/parameters/Name'` is that component.
        let resolved = { (parameter: [String: Any]) -> [String: Any] in
            guard let reference = parameter["$ref"] as? String else { return parameter }
            return components[String(reference.split(separator: "/").last ?? "")] as? [String: Any] ?? [:]
        }
        for (path, value) in document["paths"] as? [String: Any] ?? [:] {
            guard let item = value as? [String: Any] else { continue }
            let shared = item["parameters"] as? [[String: Any]] ?? []
            var allowed: Set<String> = []
            for method in methods {
                guard let operation = item[method] as? [String: Any] else { continue }
                allowed.insert(method.uppercased())
                let parameters = (shared + (operation["parameters"] as? [[String: Any]] ?? [])).map(resolved)
                let names = parameters.filter { $0["in"] as? String == "query" }.compactMap { $0["name"] as? String }
                if let id = operation["operationId"] as? String { queryNames[id] = Set(names) }
            }
            paths.append((Self.segments(path), allowed))
        }
        self.queryNames = queryNames
        self.paths = paths
    }

    static func segments(_ path: String) -> [String] { path.split(separator: "/", omittingEmptySubsequences: false).map(String.init) }

    /// The methods the document has for `path`, or nil when no path template matches it.
    func methods(for path: String) -> Set<String>? {
        let asked = Self.segments(path)
        var found: Set<String>?
        for template in paths where template.segments.count == asked.count {
            let matches = zip(template.segments, asked).allSatisfy { pattern, segment in
                pattern.hasPrefix("{") ? !segment.isEmpty : pattern == segment
            }
            if matches { found = (found ?? []).union(template.methods) }
        }
        return found
    }

    /// The query parameter names of a request target (`/path?a=1&b`), percent-decoded.
    static func queryNames(of target: String) -> [String] {
        guard let mark = target.firstIndex(of: "?") else { return [] }
        return target[target.index(after: mark)...].split(separator: "&").map { pair in
            let name = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            return name.removingPercentEncoding ?? name
        }
    }
}
