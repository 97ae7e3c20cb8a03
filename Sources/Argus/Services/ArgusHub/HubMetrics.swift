import Prometheus

/// The seed's metrics (`mobile_pairing_requests`, `_success`, `_failed`, `mobile_token_refresh`, `mobile_push_sent`,
/// and `mobile_api_requests`, the latency of each endpoint) in Prometheus's text format at `/metrics`, which only
/// the hub's own machine may read.
final class HubMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    let pairingRequests: Counter
    let pairingSuccess: Counter
    let pairingFailed: Counter
    let tokenRefresh: Counter
    let pushSent: Counter

    init() {
        pairingRequests = registry.makeCounter(name: "mobile_pairing_requests", help: "Pairing codes made")
        pairingSuccess = registry.makeCounter(name: "mobile_pairing_success", help: "Devices paired with a code")
        pairingFailed = registry.makeCounter(name: "mobile_pairing_failed", help: "Verifications refused")
        tokenRefresh = registry.makeCounter(name: "mobile_token_refresh", help: "Refresh requests")
        pushSent = registry.makeCounter(name: "mobile_push_sent", help: "Notifications APNs accepted")
    }

    /// One answered request of `endpoint` (a path template of the spec, or "other": the label stays bounded).
    func request(endpoint: String, took duration: Duration) {
        registry.makeDurationHistogram(
            name: "mobile_api_requests", labels: [("endpoint", endpoint)], buckets: Self.buckets,
            help: "Request latency by endpoint"
        ).record(duration)
    }

    static let buckets: [Duration] = [
        .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
    ]

    /// Everything in the text exposition format.
    var text: String { registry.emitToString() }
}
