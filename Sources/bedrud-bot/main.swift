import BedrudBot
