// The book's notices speak CallAPI's vocabulary: whoever imports the server book sees it too.
@_exported import CallAPI
