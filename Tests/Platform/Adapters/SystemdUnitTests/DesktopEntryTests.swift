import Foundation
import SystemdUnit
import Testing

@Suite("Desktop entries: a launcher in the application menu")
struct DesktopEntryTests {
    @Test("the text, with arguments quoted and escaped as the specification says")
    func rendered() throws {
        let entry = DesktopEntry(
            fileName: "x.desktop", name: "CribCall (Liam's room)", comment: "The app",
            executable: "/opt/cribcall/bin/cribcall",
            arguments: ["open", "--data-dir", "/home/me/my data", "100%", "a\"b$c`d\\e"], icon: "camera-web")
        let text = try entry.rendered()
        #expect(text.hasPrefix("[Desktop Entry]\nType=Application\n"))
        #expect(text.contains("Name=CribCall (Liam's room)\n"))
        #expect(
            text.contains(
                #"Exec=/opt/cribcall/bin/cribcall open --data-dir "/home/me/my data" 100%% "a\\"b\\$c\\`d\\\\e""# + "\n"
            ),
            "\(text)")
        #expect(text.hasSuffix("Categories=Utility;\n"))
    }

    @Test("a relative program or a line break is refused")
    func refusals() {
        #expect(throws: SystemdUnitError.self) {
            try DesktopEntry(fileName: "x.desktop", name: "n", comment: "c", executable: "cribcall", arguments: [])
                .rendered()
        }
        #expect(throws: SystemdUnitError.self) {
            try DesktopEntry(
                fileName: "x.desktop", name: "n\nExec=rm", comment: "c", executable: "/bin/x", arguments: []
            )
            .rendered()
        }
    }

    @Test("the directory: XDG_DATA_HOME/applications, else ~/.local/share/applications")
    func directory() {
        #expect(DesktopEntry.defaultDirectory(environment: ["XDG_DATA_HOME": "/x/data"]).path == "/x/data/applications")
        #expect(
            DesktopEntry.defaultDirectory(environment: ["HOME": "/home/me", "XDG_DATA_HOME": "relative"]).path
                == "/home/me/.local/share/applications")
    }
}
