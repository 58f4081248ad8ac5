#if canImport(Glibc)
import Glibc
#endif
import BedrudMedia

// `--split-size`: what the lifecycle's `.segmentBytes` input is fed with.
extension SessionFolder {
    /// Bytes on disk of the largest file of the segment being written now (a file is
    /// `NAME.part` until it is finished).
    var largestCurrentSegmentBytes: Int64 {
        var largest: Int64 = 0
        for path in currentPaths.values {
            var st = stat()
            if stat(path + ".part", &st) == 0 || stat(path, &st) == 0 { largest = max(largest, Int64(st.st_size)) }
        }
        return largest
    }
}
