import Rooms
