import Foundation
import SystemdUnit
import TestSupport
import Testing

/// Writing unit files: location, mode, atomicity, overwrite rules, next steps.
@Suite("UnitFileInstaller")
struct UnitFileInstallerTests {
    @Test("the default directory is $XDG_CONFIG_HOME/systemd/user, else ~/.config/systemd/user")
    func defaultDirectory() {
        #expect(
            UnitFileInstaller.defaultDirectory(environment: ["XDG_CONFIG_HOME": "/x/cfg", "HOME": "/home/a"]).path
                == "/x/cfg/systemd/user")
        #expect(
            UnitFileInstaller.defaultDirectory(environment: ["XDG_CONFIG_HOME": "rel", "HOME": "/home/a"]).path
                == "/home/a/.config/systemd/user")
        #expect(
            UnitFileInstaller.defaultDirectory(environment: ["HOME": "/home/a"]).path
                == "/home/a/.config/systemd/user")
    }

    @Test("a new unit is created with mode 0644; the same text again is unchanged; no temporary file is left")
    func createsThenUnchanged() throws {
        let root = try Subprocess.temporaryDirectory("unit-install")
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("config/systemd/user")
        #expect(try UnitFileInstaller.install("A\n", named: "x.service", in: directory, force: false) == .created)
        let path = directory.appendingPathComponent("x.service").path
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "A\n")
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o644)
        #expect(try UnitFileInstaller.install("A\n", named: "x.service", in: directory, force: false) == .unchanged)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["x.service"])
    }

    @Test("a different existing unit is kept unless force; with force it is replaced")
    func overwriteRules() throws {
        let directory = try Subprocess.temporaryDirectory("unit-install")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("x.service").path
        try "mine\n".write(toFile: path, atomically: true, encoding: .utf8)
        let error = #expect(throws: SystemdUnitError.self) {
            try UnitFileInstaller.install("new\n", named: "x.service", in: directory, force: false)
        }
        #expect(error?.code == .unitExists)
        #expect(error?.message.contains("--force") == true)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "mine\n")
        #expect(try UnitFileInstaller.install("new\n", named: "x.service", in: directory, force: true) == .replaced)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "new\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["x.service"])
    }

    @Test("an unwritable directory is a clear writeFailed error")
    func unwritable() throws {
        let error = #expect(throws: SystemdUnitError.self) {
            try UnitFileInstaller.install("A", named: "x.service", in: URL(fileURLWithPath: "/proc/nope"), force: false)
        }
        #expect(error?.code == .writeFailed)
    }

    @Test("the next steps reload, enable --now, enable lingering; a custom directory is linked first")
    func nextSteps() {
        let environment = ["HOME": "/home/a"]
        let standard = UnitFileInstaller.nextSteps(
            for: "cribcall-monitor.service", in: URL(fileURLWithPath: "/home/a/.config/systemd/user"),
            environment: environment)
        #expect(
            standard.prefix(3) == [
                "systemctl --user daemon-reload", "systemctl --user enable --now cribcall-monitor.service",
                "loginctl enable-linger \"$USER\"   # keep it running without a login session, and at boot",
            ])
        let custom = UnitFileInstaller.nextSteps(
            for: "cribcall-monitor.service", in: URL(fileURLWithPath: "/srv/my units"), environment: environment)
        #expect(custom.first == "systemctl --user link '/srv/my units/cribcall-monitor.service'")
    }
}
