// BedrudCore
