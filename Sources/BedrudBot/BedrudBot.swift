// BedrudBot
