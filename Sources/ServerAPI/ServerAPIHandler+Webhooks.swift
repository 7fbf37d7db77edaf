import Foundation
import ShowroomWire
import Webhooks

/// The coordinator's webhooks as the API shows them: where they go and how delivery goes (never
/// the secret), and a test event posted through the same dispatcher, signed as the others.
public struct APIWebhooks: Sendable {
    /// The receiver URLs.
    public let urls: [String]
    /// Whether posts are signed.
    public let signed: Bool
    /// The coordinator's dispatcher, nil without webhooks.
    public let dispatcher: WebhookDispatcher?

    /// The webhooks of a coordinator.
    public init(urls: [String], signed: Bool, dispatcher: WebhookDispatcher?) {
        self.urls = urls
        self.signed = signed
        self.dispatcher = dispatcher
    }
}

extension ServerAPIHandler {
    func getWebhooks(_ input: Operations.GetWebhooks.Input) async throws -> Operations.GetWebhooks.Output {
        let total = await webhooks.dispatcher?.statistics().total ?? WebhookCounts()
        return .ok(.init(body: .json(.init(
            urls: webhooks.urls, signed: webhooks.signed, delivered: Int64(total.delivered), retried: Int64(total.retried),
            givenUp: Int64(total.givenUp), dropped: Int64(total.dropped), queued: Int64(total.queued)))))
    }

    func testWebhooks(_ input: Operations.TestWebhooks.Input) async throws -> Operations.TestWebhooks.Output {
        guard let dispatcher = webhooks.dispatcher, !webhooks.urls.isEmpty else {
            throw ShowroomError(.interactionNotAllowed, "no webhook URL is configured on coordinator \(coordinator.nodeID) (webhookURLs)")
        }
        let now = nowMs()
        let notice = "webhook-test-\(coordinator.nodeID)-\(now)-\(UInt32.random(in: 0 ... .max))"
        let object: [String: Any] = ["noticeId": notice, "eventType": "webhook_test", "notifyMs": now,
                                     "payload": ["node": coordinator.nodeID]]
        let body = Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
        dispatcher.enqueue(WebhookEvent(noticeID: notice, orderKey: "webhook-test", body: body))
        return .accepted(.init(body: .json(.init(noticeId: notice, urls: webhooks.urls))))
    }
}
