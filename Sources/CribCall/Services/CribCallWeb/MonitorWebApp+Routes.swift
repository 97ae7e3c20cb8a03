import CanonicalJSON
import CribCallMonitor
import CribCallProtocol
import CribCallStore
public import Foundation
import HTTPTypes
import Hummingbird
public import LocalWebApp
import NIOCore
import SafetyDetection
import StreamMedia

extension MonitorWebApp {
    /// Serves the app on loopback at `port` (0: any free port) until the returned server is closed.
    /// - Throws: ``LocalWebAppError`` when the port cannot be bound or the app's files are missing.
    public nonisolated func serve(port: Int, host: String = "127.0.0.1") async throws -> LocalWebServer {
        let assets = try Self.bundledAssets()
        return try await LocalWebServer.start(host: host, port: port, name: "cribcall") { router in
            assets.addRoutes(to: router)
            self.addAPI(to: router)
        }
    }

    /// The app's files (`Public/` copied into the module's resources).
    static func bundledAssets() throws -> StaticAssets {
        guard let resources = Bundle.module.resourceURL else {
            throw LocalWebAppError("the CribCallWeb resource bundle is missing: rebuild cribcall")
        }
        return try StaticAssets(directory: resources.appendingPathComponent("Public"))
    }

    nonisolated func addAPI(to router: Router<BasicRequestContext>) {
        router.get("/api/state") { _, _ in WebAPI.answer(await self.state()) }
        router.get("/api/events") { _, _ in ServerSentEvent.response(await self.subscribe()) }
        router.post("/api/app") { request, _ in
            try await WebAPI.withObject(request) { body in try await self.changePreferences(body) }
        }
        router.post("/api/settings") { request, _ in
            try await WebAPI.withObject(request) { body in try await self.changeSettings(body) }
        }
        router.get("/api/camera.jpg") { _, _ in
            guard let jpeg = await self.livePicture() else {
                return WebAPI.refusal(.serviceUnavailable, await self.pictureUnavailableReason())
            }
            return Response(
                status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "no-store"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: jpeg)))
        }
        router.post("/api/camera/reconnect") { _, _ in
            guard let camera = self.camera else {
                return WebAPI.refusal(.serviceUnavailable, await self.pictureUnavailableReason())
            }
            camera.reconnect()
            return WebAPI.answer(await self.state())
        }
        router.post("/api/calibration") { _, _ in WebAPI.answer(await self.startCalibration()) }
        router.get("/api/calibration") { _, _ in WebAPI.answer(await self.calibration()) }
        router.post("/api/alerts/:alertId/action") { request, context in
            let alertId = context.parameters.get("alertId") ?? ""
            return try await WebAPI.with(AlertActionChoice.self, request) { body in
                guard let action = body.action.flatMap(AlertActionKind.init(rawValue:)) else {
                    return WebAPI.refusal(.badRequest, AlertActionChoice.shape)
                }
                guard let alert = await self.act(alertId: alertId, action: action) else {
                    return WebAPI.refusal(.notFound, "no recent alert \(alertId.prefix(64)) on this monitor")
                }
                return WebAPI.answer(alert)
            }
        }
        router.post("/api/trigger") { request, _ in
            try await WebAPI.with(TriggerRequest.self, request) { body in
                guard let kind = body.kind.map(SafetyAlertKind.init(rawValue:)), SafetyAlertKind.known.contains(kind)
                else { return WebAPI.refusal(.badRequest, TriggerRequest.shape) }
                switch await self.trigger(kind) {
                case .success(let alert): return WebAPI.answer(alert)
                case .failure(let refusal): return WebAPI.refusal(.conflict, "no alert was raised: \(refusal)")
                }
            }
        }
        router.post("/api/live") { request, _ in
            try await WebAPI.with(LiveOpening.self, request) { body in
                guard let mediaType = MediaType(rawValue: body.mediaType ?? MediaType.audioVideo.rawValue) else {
                    return WebAPI.refusal(.badRequest, LiveOpening.shape)
                }
                switch await self.startLive(mediaType) {
                case .success(let offer): return WebAPI.answer(offer)
                case .failure(let refusal): return WebAPI.refusal(.serviceUnavailable, refusal.description)
                }
            }
        }
        router.post("/api/live/:sessionId/answer") { request, context in
            let sessionId = context.parameters.get("sessionId") ?? ""
            return try await WebAPI.with(PageAnswer.self, request, limit: 64 * 1024) { body in
                switch await self.answerLive(sessionId, sdp: body.sdp, candidates: body.iceCandidates) {
                case .success(let monitorCandidates):
                    return WebAPI.answer(["ok": true, "candidates": .array(monitorCandidates.map(WebAPI.json))])
                case .failure(let refusal):
                    return WebAPI.refusal(.conflict, refusal.description)
                }
            }
        }
        router.post("/api/live/:sessionId/end") { _, context in
            await self.endLive(context.parameters.get("sessionId") ?? "")
            return WebAPI.answer(["ok": true])
        }
        router.get("/api/history") { request, _ in
            await HistoryReport.answer(request.uri.queryParameters.get("range") ?? "tonight") {
                try await self.history($0)
            }
        }
        router.post("/api/pairing/qr") { _, _ in
            await self.showQR()
            return WebAPI.answer(await self.state())
        }
        router.post("/api/listeners/:listenerId/revoke") { _, context in
            let listenerId = context.parameters.get("listenerId") ?? ""
            do {
                guard try await self.revoke(listenerId: listenerId) else {
                    return WebAPI.refusal(
                        .notFound, "no paired listener \(listenerId.prefix(64)); it may be unpaired already")
                }
            } catch {
                return WebAPI.storeRefusal("unpair this listener", error, nothingDone: "it is still paired")
            }
            return WebAPI.answer(await self.state())
        }
    }

    // MARK: changes

    private func changePreferences(_ body: JSONValue) async throws -> Response {
        if let refusal = WebAPI.changePreferences(body, in: database) { return refusal }
        await followSetup()
        schedulePush()
        return WebAPI.answer(await state())
    }

    private func changeSettings(_ body: JSONValue) async throws -> Response {
        var problems: [String] = []
        do {
            try database.updateMonitorSettings { settings in
                for (key, value) in body.objectValue ?? [:] {
                    switch key {
                    case "monitoring": WebAPI.set(&settings.monitoring, value, key, &problems)
                    case "safetyAlerts": WebAPI.set(&settings.safetyAlerts, value, key, &problems)
                    case "stillnessMinutes": WebAPI.set(&settings.stillnessMinutes, value, key, &problems)
                    case "crySensitivity": WebAPI.set(&settings.crySensitivity, value, key, &problems)
                    case "threshold": WebAPI.set(&settings.threshold, value, key, &problems)
                    case "minDurationMs": WebAPI.set(&settings.minDurationMs, value, key, &problems)
                    case "cooldownSec": WebAPI.set(&settings.cooldownSec, value, key, &problems)
                    case "autoStreamSec": WebAPI.set(&settings.autoStreamSec, value, key, &problems)
                    case "autoStream":
                        guard let mode = value.stringValue.flatMap(AutoStreamMode.init(rawValue:)) else {
                            problems.append("autoStream must be none, audio or audio_video")
                            continue
                        }
                        settings.autoStream = mode
                    case "monitorName": WebAPI.set(&settings.monitorName, value, key, &problems)
                    case "sleepArea":
                        guard let x = value["x"]?.doubleValue, let y = value["y"]?.doubleValue,
                            let w = value["w"]?.doubleValue, let h = value["h"]?.doubleValue
                        else {
                            problems.append("sleepArea must be {\"x\", \"y\", \"w\", \"h\"} with numbers 0…1")
                            continue
                        }
                        do {
                            let area = try SleepArea(x: x, y: y, width: w, height: h)
                            settings.sleepArea = area.description
                        } catch let error as SleepAreaError {
                            problems.append("sleepArea: \(error.message)")
                        } catch {
                            problems.append("sleepArea: \(error)")
                        }
                    default: problems.append("unknown setting \(key.prefix(40))")
                    }
                }
                if let problem = problems.first { throw WebInputError(problem) }
            }
        } catch let error as WebInputError {
            return WebAPI.refusal(.badRequest, error.message)
        } catch let error as CribCallStoreError {
            return WebAPI.refusal(.badRequest, error.description)
        }
        await service.applyStoredSettings()
        schedulePush()
        return WebAPI.answer(await state())
    }

    // MARK: the camera

    /// The latest picture, but never while monitoring is paused: a stale picture must not pass for live.
    private func livePicture() async -> [UInt8]? {
        guard camera != nil, let status = await service.safetyStatus, status.monitoring != .paused else { return nil }
        return picture()
    }

    private func pictureUnavailableReason() async -> String {
        guard camera != nil else {
            return "this monitor watches no camera: start it with --safety (and --video-source) for a live view"
        }
        let reason = await service.safetyStatus?.reason ?? "waiting for the camera"
        return "Live view unavailable: \(reason)"
    }

    // MARK: JSON

    static func json(_ settings: MonitorSettings) -> JSONValue {
        let area = (try? SleepArea(parsing: settings.sleepArea)) ?? .wholeFrame
        return [
            "monitoring": .bool(settings.monitoring),
            "safetyAlerts": .bool(settings.safetyAlerts),
            "sleepArea": [
                "x": .number(area.x), "y": .number(area.y), "w": .number(area.width), "h": .number(area.height),
            ],
            "stillnessMinutes": .number(Double(settings.stillnessMinutes)),
            "crySensitivity": .string(settings.crySensitivity), "threshold": .number(Double(settings.threshold)),
            "minDurationMs": .number(Double(settings.minDurationMs)),
            "cooldownSec": .number(Double(settings.cooldownSec)), "monitorName": .string(settings.monitorName),
            "autoStream": .string(settings.autoStream.rawValue),
            "autoStreamSec": .number(Double(settings.autoStreamSec)),
        ]
    }

    /// An alert as the page shows it, with the baby's name the parent gave (in the app's preferences).
    func json(_ entry: Alert) -> JSONValue {
        WebAPI.json(
            entry.alert, update: entry.update,
            babyName: health.attempt("read the app's preferences", from: database) { try $0.appPreferences() }?.babyName
        )
    }
}
