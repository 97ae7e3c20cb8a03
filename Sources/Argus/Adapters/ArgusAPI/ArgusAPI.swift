/// The Argus mobile API, generated from `docs/api/mobile-api.yaml` at build time (swift-openapi-generator): the
/// `Components` and `Operations` types, `APIProtocol` (the hub implements it) and `Client` (the app's side).
public enum ArgusAPIInfo {
    /// Where the mobile API lives on the hub.
    public static let basePath = "/api/v1/mobile"
    /// The document the code is generated from, relative to the repository.
    public static let document = "docs/api/mobile-api.yaml"
}
