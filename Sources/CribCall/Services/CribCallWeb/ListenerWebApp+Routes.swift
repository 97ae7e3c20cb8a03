import CanonicalJSON
import CribCallListener
import CribCallProtocol
import CribCallStore
public import Foundation
import HTTPTypes
import Hummingbird
public import LocalWebApp
import NIOCore
import StreamMedia

extension ListenerWebApp {
    /// Serves the app on loopback at `port` (0: any free port) until the returned server is closed.
    /// - Throws: ``LocalWebAppError`` when the port cannot be bound or the app's files are missing.
    public nonisolated func serve(port: Int, host: String = "127.0.0.1") async throws -> LocalWebServer {
        let assets = try MonitorWebApp.bundledAssets()
        return try await LocalWebServer.start(host: host, port: port, name: "cribcall") { router in
            assets.addRoutes(to: router)
            self.addAPI(to: router)
        }
    }

    nonisolated func addAPI(to router: Router<BasicRequestContext>) {
        router.get("/api/state") { _, _ in WebAPI.answer(await self.state()) }
        router.get("/api/events") { _, _ in ServerSentEvent.response(await self.subscribe()) }
        router.post("/api/app") { request, _ in
            try await WebAPI.withObject(request) { body in
                if let refusal = WebAPI.changePreferences(body, in: self.database) { return refusal }
                await self.schedulePush()
                return WebAPI.answer(await self.state())
            }
        }
        router.post("/api/settings") { request, _ in
            try await WebAPI.withObject(request) { body in
                guard let value = body["onNoise"]?.stringValue, let action = OnNoiseAction(rawValue: value),
                    body.objectValue?.count == 1
                else { return WebAPI.refusal(.badRequest, "send {\"onNoise\": \"notify\" or \"open\"}") }
                try self.database.setListenerOnNoise(action)
                await self.schedulePush()
                return WebAPI.answer(await self.state())
            }
        }
        router.get("/api/history") { request, _ in
            await HistoryReport.answer(request.uri.queryParameters.get("range") ?? "tonight") {
                try await self.history($0)
            }
        }
        router.post("/api/scan") { _, _ in
            // What went wrong is in the state (`scanProblem`): the page shows it next to "Look for monitors".
            await self.scan()
            return WebAPI.answer(await self.state())
        }
        router.post("/api/pair") { request, _ in
            try await WebAPI.withObject(request) { body in
                guard let host = body["host"]?.stringValue, let port = body["port"]?.doubleValue,
                    let fingerprint = body["fingerprint"]?.stringValue
                else {
                    return WebAPI.refusal(
                        .badRequest,
                        "send {\"host\", \"port\", \"fingerprint\", \"name\"} of a monitor found on the LAN")
                }
                let name = body["name"]?.stringValue.map { String($0.prefix(64)) } ?? "Monitor at \(host.prefix(64))"
                if let problem = await self.startPairing(
                    host: host, port: (0...65535).contains(port) ? Int(port) : 0, fingerprint: fingerprint,
                    name: name)
                {
                    return WebAPI.refusal(.conflict, problem)
                }
                return WebAPI.answer(await self.state())
            }
        }
        router.post("/api/pair/qr") { request, _ in
            try await WebAPI.withObject(request) { body in
                guard let text = body["qr"]?.stringValue else {
                    return WebAPI.refusal(
                        .badRequest, "send {\"qr\": the pairing code's text, \"address\": optional host[:port]}")
                }
                if let problem = await self.startQRPairing(qrText: text, address: body["address"]?.stringValue) {
                    return WebAPI.refusal(.badRequest, problem)
                }
                return WebAPI.answer(await self.state())
            }
        }
        router.post("/api/pair/pin") { request, _ in
            try await WebAPI.withObject(request) { body in
                if let problem = await self.submitPIN(body["pin"]?.stringValue ?? "") {
                    return WebAPI.refusal(.badRequest, problem)
                }
                return WebAPI.answer(await self.state())
            }
        }
        router.post("/api/pair/cancel") { _, _ in
            await self.cancelPairing()
            return WebAPI.answer(await self.state())
        }
        router.post("/api/monitors/:monitorId/forget") { _, context in
            do {
                if let problem = try await self.forget(monitorId: context.parameters.get("monitorId") ?? "") {
                    return WebAPI.refusal(.notFound, problem)
                }
            } catch {
                return WebAPI.storeRefusal("read the paired monitors", error, nothingDone: "nothing was forgotten")
            }
            return WebAPI.answer(await self.state())
        }
        router.post("/api/alerts/:monitorId/:alertId/action") { request, context in
            let monitorId = context.parameters.get("monitorId") ?? ""
            let alertId = context.parameters.get("alertId") ?? ""
            return try await WebAPI.withObject(request) { body in
                // A notice raised here (a noise, a lost link): any action closes it here; the monitor has no part.
                if await self.dismissNotice(alertId) { return WebAPI.answer(["ok": true]) }
                guard let action = body["action"]?.stringValue.flatMap(AlertActionKind.init(rawValue:)) else {
                    return WebAPI.refusal(.badRequest, "action must be checking, okay or mute")
                }
                do {
                    try await self.service.act(action, on: alertId, monitorId: monitorId)
                } catch {
                    return WebAPI.refusal(.conflict, "\(error)")
                }
                return WebAPI.answer(["ok": true])
            }
        }
        router.post("/api/streams") { request, _ in
            try await WebAPI.withObject(request) { body in
                guard let monitorId = body["monitorId"]?.stringValue,
                    let mediaType = MediaType(rawValue: body["mediaType"]?.stringValue ?? "audio")
                else { return WebAPI.refusal(.badRequest, "send {\"monitorId\", \"mediaType\": audio or audio_video}") }
                do {
                    let sessionId = try await self.openStream(monitorId: monitorId, mediaType: mediaType)
                    return WebAPI.answer(["sessionId": .string(sessionId)])
                } catch {
                    return WebAPI.refusal(.conflict, "\(error)")
                }
            }
        }
        router.post("/api/streams/:sessionId/answer") { request, context in
            let sessionId = context.parameters.get("sessionId") ?? ""
            return try await WebAPI.withObject(request, limit: 64 * 1024) { body in
                guard let sdp = body["sdp"]?.stringValue else {
                    return WebAPI.refusal(.badRequest, "send {\"sdp\": the answer, \"candidates\": [...]}")
                }
                guard let receiver = self.media.receiver(sessionId) else {
                    return WebAPI.refusal(.notFound, "no stream \(sessionId.prefix(64)) is waiting for a page")
                }
                do {
                    try receiver.answer(sdp: sdp, candidates: WebAPI.candidates(body["candidates"]))
                } catch {
                    return WebAPI.refusal(.conflict, "\(error)")
                }
                return WebAPI.answer(["ok": true])
            }
        }
        router.post("/api/streams/:sessionId/flowing") { _, context in
            guard let receiver = self.media.receiver(context.parameters.get("sessionId") ?? "") else {
                return WebAPI.refusal(.notFound, "no such stream")
            }
            do {
                try receiver.markFlowing()
            } catch {
                return WebAPI.refusal(.conflict, "\(error)")
            }
            return WebAPI.answer(["ok": true])
        }
        router.post("/api/streams/:sessionId/pin") { _, context in
            do {
                try await self.service.pinStream(sessionId: context.parameters.get("sessionId") ?? "")
            } catch {
                return WebAPI.refusal(.conflict, "\(error)")
            }
            await self.streamKept(sessionId: context.parameters.get("sessionId") ?? "")
            return WebAPI.answer(["ok": true])
        }
        router.post("/api/streams/:sessionId/end") { _, context in
            await self.service.endStream(sessionId: context.parameters.get("sessionId") ?? "")
            return WebAPI.answer(["ok": true])
        }
    }
}
