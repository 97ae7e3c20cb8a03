import SafetyDetection
import Testing

@Suite("SleepArea: x,y,w,h fractions of the frame")
struct SleepAreaTests {
    @Test func parsesAndWritesBack() throws {
        let area = try SleepArea(parsing: " 0.2, 0.1 ,0.6,0.8")
        #expect(area.description == "0.2,0.1,0.6,0.8")
        #expect(try SleepArea(parsing: area.description) == area)
        #expect(SleepArea.wholeFrame.description == "0,0,1,1")
        let box = area.pixels(frameWidth: 160, frameHeight: 120)
        #expect(box.left == 32 && box.top == 12 && box.right == 128 && box.bottom == 108)
        #expect(area.contains(x: 0.5, y: 0.5) && !area.contains(x: 0.1, y: 0.5))
    }

    @Test(arguments: [
        "0.2,0.1,0.6", "a,b,c,d", "0.5,0.5,0.6,0.2", "0.2,0.1,0.01,0.8", "-0.1,0,0.5,0.5", "nan,0,1,1", "",
    ])
    func refusesWithWhatToWrite(text: String) {
        #expect {
            try SleepArea(parsing: text)
        } throws: { error in
            (error as? SleepAreaError)?.message.contains("0.") == true
        }
    }
}
