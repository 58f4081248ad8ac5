import BedrudBot
import FoundationEssentials
import Glibc

// The whole program lives in BedrudBot; this only hands over argv and the exit code.
let code = await BedrudBotCLI.run(CommandLine.arguments, environment: ProcessInfo.processInfo.environment)
exit(code)
