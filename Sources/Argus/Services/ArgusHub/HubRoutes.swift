/// The paths of docs/api/mobile-api.yaml and their methods, so that a path called with another method is answered
/// 405 with `Allow` (the router alone says 404). `HubRoutesTests` holds this table to the YAML.
enum HubRoutes {
    static let table: [(template: [String], methods: [String])] = [
        ("/health", ["GET"]),
        ("/api/v1/mobile/auth/pair", ["POST"]),
        ("/api/v1/mobile/auth/verify", ["POST"]),
        ("/api/v1/mobile/auth/refresh", ["POST"]),
        ("/api/v1/mobile/events", ["GET"]),
        ("/api/v1/mobile/events/recent", ["GET"]),
        ("/api/v1/mobile/events/{event_id}", ["GET"]),
        ("/api/v1/mobile/events/{event_id}/thumbnail", ["GET"]),
        ("/api/v1/mobile/cameras", ["GET"]),
        ("/api/v1/mobile/cameras/{camera_id}/snapshot", ["GET"]),
        ("/api/v1/mobile/push/register", ["POST"]),
        ("/api/v1/mobile/push/unregister", ["DELETE"]),
    ].map { (template: $0.0.split(separator: "/").map(String.init), methods: $0.1) }

    /// Every path template, as the YAML writes it.
    static var paths: [String] { table.map { "/" + $0.template.joined(separator: "/") } }

    /// The template `path` matches ("/api/v1/mobile/events/{event_id}"), or nil.
    static func template(for path: Substring) -> String? {
        route(for: path).map { "/" + $0.template.joined(separator: "/") }
    }

    /// The methods `path` answers to (empty: no such path). A literal segment beats a `{parameter}`.
    static func methods(for path: Substring) -> [String] { route(for: path)?.methods ?? [] }

    private static func route(for path: Substring) -> (template: [String], methods: [String])? {
        let segments = path.split(separator: "?", maxSplits: 1).first.map { $0.split(separator: "/") } ?? []
        let matches = table.filter { route in
            route.template.count == segments.count
                && zip(route.template, segments).allSatisfy { $0.hasPrefix("{") || $0 == $1 }
        }
        let literal = matches.first { !$0.template.contains { $0.hasPrefix("{") } }
        return literal ?? matches.first
    }
}
