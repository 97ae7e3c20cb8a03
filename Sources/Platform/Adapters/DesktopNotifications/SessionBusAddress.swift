import Foundation

/// Finds the D-Bus session bus the way a desktop session publishes it, without ever starting one (libdbus's own
/// lookup may "autolaunch" a bus; a background listener must not).
enum SessionBusAddress {
    /// The session bus address, or nil when this environment has no session bus.
    ///
    /// `DBUS_SESSION_BUS_ADDRESS` when set (and not `disabled:`), else the systemd user bus socket
    /// `$XDG_RUNTIME_DIR/bus` when it exists.
    ///
    /// - Parameter environment: The process environment.
    static func resolve(environment: [String: String]) -> String? {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty {
            return address.hasPrefix("disabled:") ? nil : address
        }
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            let socket = runtime + (runtime.hasSuffix("/") ? "bus" : "/bus")
            let type = (try? FileManager.default.attributesOfItem(atPath: socket))?[.type] as? FileAttributeType
            if type == .typeSocket {
                return "unix:path=" + escaped(socket)
            }
        }
        return nil
    }

    /// Escapes a value for a D-Bus address: bytes outside `[-0-9A-Za-z_/.\*]` become `%XX`.
    static func escaped(_ value: String) -> String {
        var out = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "/"), UInt8(ascii: "."), UInt8(ascii: "\\"),
                UInt8(ascii: "*"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "a")...UInt8(ascii: "z"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
