// BedrudNet
