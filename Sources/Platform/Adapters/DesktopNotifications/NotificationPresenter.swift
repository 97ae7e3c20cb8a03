/// Shows desktop notifications. The real one is ``FreedesktopNotifier``; tests of a service use
/// ``RecordingNotificationPresenter``.
public protocol NotificationPresenter: Sendable {
    /// Shows `notification`, replacing the one shown before with the same ``DesktopNotification/tag``.
    ///
    /// Returns within the presenter's time bound even when the notification server hangs.
    ///
    /// - Parameter notification: What to show.
    /// - Returns: The presenter's id of the notification on screen.
    /// - Throws: ``DesktopNotificationError`` when it could not be shown. Callers treat that as non-fatal: a desktop
    ///   notification is a convenience next to the command's own output.
    @discardableResult
    func notify(_ notification: DesktopNotification) async throws -> UInt32

    /// A new stream of the user's clicks on the ``DesktopNotification/actions`` of notifications this presenter
    /// showed.
    ///
    /// Each call returns a new stream, and every stream gets every invocation from the moment it is made. Each
    /// keeps the newest 16 invocations its reader has not taken yet (`.bufferingNewest(16)`). A presenter whose
    /// server cannot show actions never yields; callers keep their other ways to act.
    ///
    /// - Returns: The invocations, in the order they happened.
    func actionInvocations() -> AsyncStream<DesktopNotification.Invocation>
}
