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
            try await WebAPI.with(OnNoiseChange.self, request) { body in
                try self.database.setListenerOnNoise(body.onNoise)
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
            try await WebAPI.with(PINPairingStart.self, request) { body in
                let name = body.name.map { String($0.prefix(64)) } ?? "Monitor at \(body.host.prefix(64))"
                if let problem = await self.startPairing(
                    host: body.host, port: (0...65535).contains(body.port) ? body.port : 0,
                    fingerprint: body.fingerprint, name: name)
                {
                    return WebAPI.refusal(.conflict, problem)
                }
                return WebAPI.answer(await self.state())
            }
        }
        router.post("/api/pair/qr") { request, _ in
            try await WebAPI.with(QRPairingStart.self, request) { body in
                if let problem = await self.startQRPairing(qrText: body.qr, address: body.address) {
                    return WebAPI.refusal(.badRequest, problem)
                }
                return WebAPI.answer(await self.state())
            }
        }
        router.post("/api/pair/pin") { request, _ in
            try await WebAPI.with(PINEntry.self, request) { body in
                if let problem = await self.submitPIN(body.pin ?? "") {
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
            return try await WebAPI.with(AlertActionChoice.self, request) { body in
                // A notice raised here (a noise, a lost link): any action closes it here; the monitor has no part.
                if await self.dismissNotice(alertId) { return WebAPI.answer(["ok": true]) }
                guard let action = body.action.flatMap(AlertActionKind.init(rawValue:)) else {
                    return WebAPI.refusal(.badRequest, AlertActionChoice.shape)
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
            try await WebAPI.with(StreamOpening.self, request) { body in
                guard let mediaType = MediaType(rawValue: body.mediaType ?? "audio") else {
                    return WebAPI.refusal(.badRequest, StreamOpening.shape)
                }
                do {
                    let sessionId = try await self.openStream(monitorId: body.monitorId, mediaType: mediaType)
                    return WebAPI.answer(["sessionId": .string(sessionId)])
                } catch {
                    return WebAPI.refusal(.conflict, "\(error)")
                }
            }
        }
        router.post("/api/streams/:sessionId/answer") { request, context in
            let sessionId = context.parameters.get("sessionId") ?? ""
            return try await WebAPI.with(PageAnswer.self, request, limit: 64 * 1024) { body in
                guard let receiver = self.media.receiver(sessionId) else {
                    return WebAPI.refusal(.notFound, "no stream \(sessionId.prefix(64)) is waiting for a page")
                }
                do {
                    try receiver.answer(sdp: body.sdp, candidates: body.iceCandidates)
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
